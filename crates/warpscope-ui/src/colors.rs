//! Colours: one hue family per kind of event (kernels, each copy direction, sets, API calls, CPU
//! operators), and within kernels a colour that is stable per kernel name, so the same kernel
//! looks the same in every run and every view.

use egui::Color32;
use warpscope_core::EventKind;
use warpscope_core::model::CopyKind;

/// Colour of copies by direction.
pub fn copy_color(kind: CopyKind) -> Color32 {
    match kind {
        CopyKind::HtoD | CopyKind::HtoA => Color32::from_rgb(0xd9, 0x5f, 0x02),
        CopyKind::DtoH | CopyKind::AtoH => Color32::from_rgb(0x75, 0x70, 0xb3),
        CopyKind::DtoD | CopyKind::AtoA | CopyKind::AtoD | CopyKind::DtoA => {
            Color32::from_rgb(0xe7, 0x29, 0x8a)
        }
        CopyKind::PtoP => Color32::from_rgb(0xa6, 0x76, 0x1d),
        CopyKind::HtoH => Color32::from_rgb(0x99, 0x99, 0x99),
        CopyKind::UnifiedHtoD | CopyKind::UnifiedDtoH | CopyKind::UnifiedDtoD => {
            Color32::from_rgb(0xe6, 0xab, 0x02)
        }
        CopyKind::Memset => Color32::from_rgb(0x66, 0xa6, 0x1e),
        CopyKind::Unknown => Color32::from_rgb(0x88, 0x88, 0x88),
    }
}

/// Colour of an event kind when no finer colour applies.
pub fn kind_color(kind: EventKind) -> Color32 {
    match kind {
        EventKind::Kernel => Color32::from_rgb(0x1b, 0x9e, 0x77),
        EventKind::Memcpy => copy_color(CopyKind::Unknown),
        EventKind::Memset => copy_color(CopyKind::Memset),
        EventKind::UnifiedMemory => copy_color(CopyKind::UnifiedHtoD),
        EventKind::GpuAnnotation | EventKind::Nvtx | EventKind::UserAnnotation => {
            Color32::from_rgb(0x8c, 0x8c, 0x5a)
        }
        EventKind::GpuSync => Color32::from_rgb(0xb0, 0x30, 0x30),
        EventKind::Runtime => Color32::from_rgb(0x37, 0x7e, 0xb8),
        EventKind::Driver => Color32::from_rgb(0x4d, 0x6f, 0x9a),
        EventKind::CpuOp => Color32::from_rgb(0x98, 0x4e, 0xa3),
        EventKind::PythonFunction => Color32::from_rgb(0x5a, 0x7d, 0x5a),
        EventKind::Overhead => Color32::from_rgb(0x70, 0x70, 0x70),
        EventKind::Instant | EventKind::Slice => Color32::from_rgb(0x6b, 0x7b, 0x8c),
    }
}

/// A colour for a kernel that depends only on its name: a hue from a hash of the name, in the
/// green-to-teal-to-blue band kept for kernels, so kernels never look like copies or API calls.
pub fn kernel_color(name: &str) -> Color32 {
    // FNV-1a: stable across runs and platforms (unlike std's randomised hasher).
    let mut h: u32 = 0x811c_9dc5;
    for b in name.bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    #[allow(clippy::cast_precision_loss)]
    let t = (h % 1000) as f32 / 1000.0;
    let hue = 0.28 + t * 0.30; // 100°..208°
    let light = 0.42 + ((h >> 10) % 100) as f32 / 100.0 * 0.16;
    egui::ecolor::Hsva::new(hue, 0.55, light + 0.2, 1.0).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_colors_are_stable_and_differ_by_name() {
        assert_eq!(kernel_color("sgemm_128x64"), kernel_color("sgemm_128x64"));
        assert_ne!(
            kernel_color("sgemm_128x64"),
            kernel_color("nchwToNhwcKernel")
        );
    }

    #[test]
    fn copy_directions_have_their_own_colors() {
        assert_ne!(copy_color(CopyKind::HtoD), copy_color(CopyKind::DtoH));
        assert_ne!(copy_color(CopyKind::DtoD), kind_color(EventKind::Kernel));
    }
}
