//! Helpers shared by the log-log plots (the profile's roofline and the live lab's plots): decade
//! ticks and grid, hover labels in the axes' own units, and the roof of a roofline as a polyline.

/// A tick of a log-10 axis: whole decades only (`0.01`, `1`, `1000`, `1e4`).
pub fn decade_tick(exponent: f64) -> String {
    if (exponent - exponent.round()).abs() > 1e-6 {
        return String::new();
    }
    #[allow(clippy::cast_possible_truncation)]
    let e = exponent.round() as i32;
    match e {
        4.. => format!("1e{e}"),
        #[allow(clippy::cast_sign_loss)]
        0.. => format!("{}", 10i64.pow(e as u32)),
        -3.. => format!("{}", 10f64.powi(e)),
        _ => format!("1e{e}"),
    }
}

/// A grid spacer with a line and a label at every decade of a log-10 axis.
pub fn decades() -> impl Fn(egui_plot::GridInput) -> Vec<egui_plot::GridMark> + 'static {
    egui_plot::uniform_grid_spacer(|_| [1.0, 1.0, 1.0])
}

/// The hover label of a plot with log axes: the nearest series' name over `text` of the point
/// under the cursor, in the axes' own units (10^x, 10^y).
pub fn hover_label(
    hover: &egui_plot::HoverPosition<'_>,
    text: impl Fn(f64, f64) -> String,
) -> Option<String> {
    let (name, point) = match hover {
        egui_plot::HoverPosition::NearDataPoint {
            plot_name,
            position,
            ..
        } => (*plot_name, position),
        egui_plot::HoverPosition::Elsewhere { position } => ("", position),
    };
    Some(format!(
        "{name}\n{}",
        text(10f64.powf(point.x), 10f64.powf(point.y))
    ))
}

/// The roof of a roofline from intensity `x0` to `x1` (FLOP/byte) as log-10 plot points:
/// min(`flops_per_s`, x × `bytes_per_s`), the y values multiplied by `y_scale` (1e-9 for
/// GFLOP/s, 1e-12 for TFLOP/s) before taking their log. Three points: the ends and the ridge.
pub fn roof_points(
    x0: f64,
    x1: f64,
    bytes_per_s: f64,
    flops_per_s: f64,
    y_scale: f64,
) -> Vec<[f64; 2]> {
    let ridge = if bytes_per_s > 0.0 {
        flops_per_s / bytes_per_s
    } else {
        x1
    };
    [x0, ridge.clamp(x0, x1), x1]
        .iter()
        .map(|&x| {
            let y = (x * bytes_per_s).min(flops_per_s);
            [x.log10(), (y * y_scale).log10()]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hover_labels_name_the_series_and_the_point() {
        let near = egui_plot::HoverPosition::NearDataPoint {
            plot_name: "saxpy",
            position: egui_plot::PlotPoint::new(0.0, 3.0),
            index: 0,
        };
        let text = |x: f64, y: f64| format!("{x:.0} / {y:.0}");
        assert_eq!(hover_label(&near, text).as_deref(), Some("saxpy\n1 / 1000"));
        let elsewhere = egui_plot::HoverPosition::Elsewhere {
            position: egui_plot::PlotPoint::new(1.0, 2.0),
        };
        assert_eq!(hover_label(&elsewhere, text).as_deref(), Some("\n10 / 100"));
    }

    #[test]
    fn decade_ticks_are_short() {
        assert_eq!(decade_tick(-2.0), "0.01");
        assert_eq!(decade_tick(0.0), "1");
        assert_eq!(decade_tick(3.0), "1000");
        assert_eq!(decade_tick(6.0), "1e6");
        assert_eq!(decade_tick(-5.0), "1e-5");
        assert_eq!(decade_tick(1.5), "");
    }

    #[test]
    fn roofs_bend_at_the_ridge() {
        // 1 TB/s and 100 TFLOP/s: ridge at 100 FLOP/byte.
        let pts = roof_points(1.0, 1e4, 1e12, 100e12, 1e-12);
        assert_eq!(pts.len(), 3);
        assert!((pts[0][0] - 0.0).abs() < 1e-9 && (pts[0][1] - 0.0).abs() < 1e-9);
        assert!((pts[1][0] - 2.0).abs() < 1e-9 && (pts[1][1] - 2.0).abs() < 1e-9);
        assert!((pts[2][0] - 4.0).abs() < 1e-9 && (pts[2][1] - 2.0).abs() < 1e-9);
    }
}
