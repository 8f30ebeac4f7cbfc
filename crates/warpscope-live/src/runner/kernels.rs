//! The bundled kernels, one method each: set up fresh inputs for a point, time its launches
//! through [`Lab::repeat`], read the result back and check it against the CPU reference.

use std::time::Instant;

use cudarc::driver::sys::CUfunction;
use warpscope_core::EventKind;
use warpscope_core::model::{CopyKind, MemoryKind};

use super::{Lab, Launch, OpDesc, PointCtx, ceil_div, copy_op, floats};
use crate::catalog::{KernelId, Memory, Target};
use crate::error::LiveError;
use crate::gpu::{Arg, Gpu};
use crate::reference::{self, Check};
use crate::results::PointResult;

/// The `vector_add` launch of a configuration over `n` floats at `[a, b, c]`.
fn vector_add_launch(
    f: CUfunction,
    config: &str,
    n: u64,
    threads: u32,
    [a, b, c]: [u64; 3],
) -> Launch<'static> {
    let (blocks, threads) = launch_shape(config, n, threads);
    Launch {
        f,
        name: "vector_add",
        grid: (blocks, 1, 1),
        block: (threads, 1, 1),
        args: vec![Arg::Ptr(a), Arg::Ptr(b), Arg::Ptr(c), Arg::U64(n)],
    }
}

/// (blocks, threads per block) of a `vector_add` configuration over `n` floats, the full grid
/// with `threads` per block.
fn launch_shape(config: &str, n: u64, threads: u32) -> (u32, u32) {
    match config {
        c if c.starts_with("1x1-") => (1, 1),
        c if c.starts_with("1x256-") => (1, 256),
        _ => (ceil_div(n, u64::from(threads)).max(1), threads),
    }
}

impl Lab<'_> {
    /// Runs one point of the sweep: the kernel's own setup, launches and check.
    pub(super) fn measure(
        &mut self,
        ctx: &PointCtx<'_>,
        result: &mut PointResult,
    ) -> Result<Option<Check>, LiveError> {
        let check = match ctx.plan.kernel.id {
            KernelId::VectorAdd => match ctx.point.config.memory {
                Memory::Host => self.vector_add_cpu(ctx, result),
                Memory::Unified => self.vector_add_unified(ctx, result),
                _ => self.vector_add_device(ctx, result),
            },
            KernelId::Saxpy => self.saxpy(ctx, result),
            KernelId::Copy => self.copy(ctx, result),
            KernelId::Sgemm => self.sgemm(ctx, result),
            KernelId::Reduce => self.reduce(ctx, result),
            KernelId::Transfer => self.transfer(ctx, result),
            KernelId::Conv2d => self.conv2d(ctx, result),
            KernelId::User => return self.user_point(ctx, result),
        }?;
        Ok(Some(check))
    }

    fn vector_add_device(
        &mut self,
        ctx: &PointCtx<'_>,
        result: &mut PointResult,
    ) -> Result<Check, LiveError> {
        let n = ctx.point.size;
        let f = self.function(ctx, "vector_add")?;
        let (a_h, b_h) = (self.random(n, -1.0, 1.0), self.random(n, -1.0, 1.0));
        let a = self.upload_new(&a_h)?;
        let b = self.upload_new(&b_h)?;
        let c = self.gpu.alloc(floats(n))?;
        let launch = vector_add_launch(
            f,
            ctx.point.config.name,
            n,
            ctx.threads(256),
            [a.ptr, b.ptr, c.ptr],
        );
        let pc = c.ptr;
        self.repeat_launch(ctx, result, &launch, &mut |lab| {
            lab.gpu.fill(pc, 0xff, floats(n))
        })?;
        let mut c_h = vec![0f32; n as usize];
        self.gpu.download(&mut c_h, &c)?;
        Ok(reference::check_vector_add(&a_h, &b_h, &c_h))
    }

    fn vector_add_unified(
        &mut self,
        ctx: &PointCtx<'_>,
        result: &mut PointResult,
    ) -> Result<Check, LiveError> {
        let n = ctx.point.size;
        let f = self.function(ctx, "vector_add")?;
        let bytes = floats(n);
        // All three at once must fit in what the device has free.
        let (free, _) = self.gpu.memory()?;
        if 3 * bytes + (256 << 20) > free {
            return Err(LiveError::OutOfMemory {
                what: format!("{} (unified memory)", ctx.label),
                need_mb: 3.0 * bytes as f64 / 1e6,
                free_mb: free as f64 / 1e6,
            });
        }
        let mut a = self.gpu.alloc_managed(bytes)?;
        let mut b = self.gpu.alloc_managed(bytes)?;
        let mut c = self.gpu.alloc_managed(bytes)?;
        let launch = vector_add_launch(
            f,
            ctx.point.config.name,
            n,
            ctx.threads(256),
            [a.ptr, b.ptr, c.ptr],
        );
        let mut rng = self.rng.clone();
        // Before every launch the host writes fresh inputs and poisons the output, so the pages
        // live on the host and each launch pays for faulting them over, as a program without
        // explicit copies does.
        self.repeat_launch(ctx, result, &launch, &mut |_| {
            rng.fill(a.as_f32_mut(), -1.0, 1.0);
            rng.fill(b.as_f32_mut(), -1.0, 1.0);
            c.as_f32_mut().fill(f32::NAN);
            Ok(())
        })?;
        self.gpu.sync()?;
        let a_h = a.as_f32_mut().to_vec();
        let b_h = b.as_f32_mut().to_vec();
        Ok(reference::check_vector_add(&a_h, &b_h, c.as_f32_mut()))
    }

    fn vector_add_cpu(
        &mut self,
        ctx: &PointCtx<'_>,
        result: &mut PointResult,
    ) -> Result<Check, LiveError> {
        let n = ctx.point.size;
        let (a, b) = (self.random(n, -1.0, 1.0), self.random(n, -1.0, 1.0));
        let mut c = vec![f32::NAN; n as usize];
        // The same schedule as the GPU runs; each run is timed with the host clock.
        self.schedule(ctx, result, 1, &mut |lab, label, _timed| {
            lab.check_cancel()?;
            c.fill(f32::NAN);
            let start = lab.now_ns();
            let clock = Instant::now();
            reference::cpu_vector_add(std::hint::black_box(&a), &b, &mut c);
            std::hint::black_box(&c);
            let t = i64::try_from(clock.elapsed().as_nanos()).unwrap_or(i64::MAX);
            lab.host_span(label.to_string(), EventKind::CpuOp, start, None);
            lab.progress.step();
            Ok(t)
        })?;
        debug_assert_eq!(result.target, Target::Cpu);
        Ok(reference::check_vector_add(&a, &b, &c))
    }

    fn saxpy(&mut self, ctx: &PointCtx<'_>, result: &mut PointResult) -> Result<Check, LiveError> {
        let n = ctx.point.size;
        let f = self.function(ctx, "saxpy")?;
        let alpha = 2.5f32;
        let (x_h, y_h) = (self.random(n, -1.0, 1.0), self.random(n, -1.0, 1.0));
        let x = self.upload_new(&x_h)?;
        let y0 = self.upload_new(&y_h)?;
        let y = self.gpu.alloc(floats(n))?;
        let threads = ctx.threads(256);
        let launch = Launch {
            f,
            name: "saxpy",
            grid: (ceil_div(n, u64::from(threads)).max(1), 1, 1),
            block: (threads, 1, 1),
            args: vec![
                Arg::F32(alpha),
                Arg::Ptr(x.ptr),
                Arg::Ptr(y.ptr),
                Arg::U64(n),
            ],
        };
        let (py0, py) = (y0.ptr, y.ptr);
        // y is updated in place: restore it from the pristine copy before every launch.
        self.repeat_launch(ctx, result, &launch, &mut |lab| {
            lab.gpu.copy_d2d(py, py0, floats(n))
        })?;
        let mut out = vec![0f32; n as usize];
        self.gpu.download(&mut out, &y)?;
        Ok(reference::check_saxpy(alpha, &x_h, &y_h, &out))
    }

    fn copy(&mut self, ctx: &PointCtx<'_>, result: &mut PointResult) -> Result<Check, LiveError> {
        let n = ctx.point.size;
        let src_h = self.random(n, -1.0, 1.0);
        let src = self.upload_new(&src_h)?;
        let dst = self.gpu.alloc(floats(n))?;
        let (ps, pd) = (src.ptr, dst.ptr);
        let poison = &mut |lab: &mut Self| lab.gpu.fill(pd, 0xff, floats(n));
        match ctx.point.config.name {
            "memcpy" => {
                let desc = OpDesc {
                    api: "cuMemcpyDtoDAsync",
                    queue: true,
                    name: CopyKind::DtoD.activity_name(),
                    kind: copy_op(
                        CopyKind::DtoD,
                        floats(n),
                        MemoryKind::Device,
                        MemoryKind::Device,
                    ),
                };
                self.repeat(ctx, result, &desc, poison, &|g| {
                    g.copy_d2d(pd, ps, floats(n))
                })?;
            }
            "vec4" => {
                let f = self.function(ctx, "copy_vec4")?;
                let blocks = self.gpu.facts.sm_count.max(1) * 8;
                let n4 = n / 4;
                let tail = u32::try_from(n % 4).unwrap_or(0);
                let launch = Launch {
                    f,
                    name: "copy_vec4",
                    grid: (blocks, 1, 1),
                    block: (ctx.threads(256), 1, 1),
                    args: vec![
                        Arg::Ptr(ps),
                        Arg::Ptr(pd),
                        Arg::U64(n4),
                        Arg::Ptr(ps + n4 * 16),
                        Arg::Ptr(pd + n4 * 16),
                        Arg::U32(tail),
                    ],
                };
                self.repeat_launch(ctx, result, &launch, poison)?;
            }
            _ => {
                let f = self.function(ctx, "copy_scalar")?;
                let threads = ctx.threads(256);
                let launch = Launch {
                    f,
                    name: "copy_scalar",
                    grid: (ceil_div(n, u64::from(threads)).max(1), 1, 1),
                    block: (threads, 1, 1),
                    args: vec![Arg::Ptr(ps), Arg::Ptr(pd), Arg::U64(n)],
                };
                self.repeat_launch(ctx, result, &launch, poison)?;
            }
        }
        let mut out = vec![0f32; n as usize];
        self.gpu.download(&mut out, &dst)?;
        Ok(reference::check_copy(&src_h, &out))
    }

    fn reduce(&mut self, ctx: &PointCtx<'_>, result: &mut PointResult) -> Result<Check, LiveError> {
        let n = ctx.point.size;
        let f = self.function(ctx, "reduce_sum")?;
        let x_h = self.random(n, 0.0, 1.0);
        let x = self.upload_new(&x_h)?;
        let out = self.gpu.alloc(4)?;
        let launch = Launch {
            f,
            name: "reduce_sum",
            grid: (self.gpu.facts.sm_count.max(1) * 8, 1, 1),
            block: (ctx.threads(256), 1, 1),
            args: vec![Arg::Ptr(x.ptr), Arg::Ptr(out.ptr), Arg::U64(n)],
        };
        let po = out.ptr;
        // The sum starts from zero: an unwritten result stays 0 and fails the check.
        self.repeat_launch(ctx, result, &launch, &mut |lab| lab.gpu.fill(po, 0, 4))?;
        let mut got = [0f32; 1];
        self.gpu.download(&mut got, &out)?;
        Ok(reference::check_reduce(&x_h, got[0]))
    }

    fn transfer(
        &mut self,
        ctx: &PointCtx<'_>,
        result: &mut PointResult,
    ) -> Result<Check, LiveError> {
        let bytes = ctx.point.size;
        let name = ctx.point.config.name;
        let to_device = name.starts_with("h2d");
        let pinned = ctx.point.config.memory == Memory::Pinned;
        let mut pattern = vec![0u8; bytes as usize];
        for (i, b) in pattern.iter_mut().enumerate() {
            *b = (i.wrapping_mul(2_654_435_761) >> 13) as u8;
        }
        let dev = self.gpu.alloc(bytes)?;
        let mut pinned_buf = if pinned {
            Some(self.gpu.alloc_pinned(bytes)?)
        } else {
            None
        };
        let mut pageable = if pinned {
            Vec::new()
        } else {
            vec![0u8; bytes as usize]
        };
        let host: &mut [u8] = match pinned_buf.as_mut() {
            Some(p) => p.as_bytes_mut(),
            None => &mut pageable,
        };
        let (kind, src, dst, api) = if to_device {
            host.copy_from_slice(&pattern);
            let src = if pinned {
                MemoryKind::Pinned
            } else {
                MemoryKind::Pageable
            };
            (CopyKind::HtoD, src, MemoryKind::Device, "cuMemcpyHtoDAsync")
        } else {
            self.gpu.upload(&dev, &pattern)?;
            let dst = if pinned {
                MemoryKind::Pinned
            } else {
                MemoryKind::Pageable
            };
            (CopyKind::DtoH, MemoryKind::Device, dst, "cuMemcpyDtoHAsync")
        };
        let host_ptr = host.as_mut_ptr();
        let pd = dev.ptr;
        // Copies from pageable memory block the host: never queue them behind a hold.
        let desc = OpDesc {
            api,
            queue: pinned,
            name: kind.activity_name(),
            kind: copy_op(kind, bytes, src, dst),
        };
        let launch = |g: &Gpu| {
            if to_device {
                g.upload_async(pd, host_ptr, bytes)
            } else {
                g.download_async(host_ptr, pd, bytes)
            }
        };
        // Poison the destination before every copy, so the check proves the last copy arrived.
        // (The host side is written only between copies, after the stream was synchronised.)
        let mut poison = |lab: &mut Self| {
            if to_device {
                lab.gpu.fill(pd, 0xff, bytes)
            } else {
                host.fill(0xff);
                Ok(())
            }
        };
        self.repeat(ctx, result, &desc, &mut poison, &launch)?;
        if to_device {
            let mut back = vec![0u8; bytes as usize];
            self.gpu.download(&mut back, &dev)?;
            Ok(reference::check_bytes(&pattern, &back))
        } else {
            let arrived: &[u8] = match pinned_buf.as_mut() {
                Some(p) => p.as_bytes_mut(),
                None => &pageable,
            };
            Ok(reference::check_bytes(&pattern, arrived))
        }
    }

    fn conv2d(&mut self, ctx: &PointCtx<'_>, result: &mut PointResult) -> Result<Check, LiveError> {
        let batch = ctx.point.size;
        let (cin, cout, side, ks) = crate::catalog::CONV;
        let f = self.function(ctx, "conv2d_forward")?;
        let input_h = self.random(batch * cin * side * side, 0.0, 1.0);
        let weight_h = self.random(cout * cin * ks * ks, -0.2, 0.2);
        let bias_h = self.random(cout, -0.1, 0.1);
        let input = self.upload_new(&input_h)?;
        let weight = self.upload_new(&weight_h)?;
        let bias = self.upload_new(&bias_h)?;
        let outputs = batch * cout * side * side;
        let output = self.gpu.alloc(floats(outputs))?;
        let batch32 =
            u32::try_from(batch).map_err(|_| LiveError::Plan("batch too large".into()))?;
        let threads = ctx.threads(256);
        let launch = Launch {
            f,
            name: "conv2d_forward",
            grid: (ceil_div(outputs, u64::from(threads)), 1, 1),
            block: (threads, 1, 1),
            args: vec![
                Arg::Ptr(input.ptr),
                Arg::Ptr(weight.ptr),
                Arg::Ptr(bias.ptr),
                Arg::Ptr(output.ptr),
                Arg::U32(batch32),
            ],
        };
        let po = output.ptr;
        self.repeat_launch(ctx, result, &launch, &mut |lab| {
            lab.gpu.fill(po, 0xff, floats(outputs))
        })?;
        let mut out = vec![0f32; outputs as usize];
        self.gpu.download(&mut out, &output)?;
        Ok(reference::check_conv2d(
            &input_h, &weight_h, &bias_h, &out, self.seed,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launch_shapes() {
        let shape = |c, n| launch_shape(c, n, 256);
        assert_eq!(shape("1x1-device", 1_000_000), (1, 1));
        assert_eq!(shape("1x256-unified", 1_000_000), (1, 256));
        assert_eq!(shape("grid-device", 1_000_000), (3907, 256));
        // A block-size sweep keeps the grid covering every element.
        assert_eq!(launch_shape("grid-device", 1_000_000, 1024), (977, 1024));
        assert_eq!(launch_shape("1x256-device", 1_000_000, 1024), (1, 256));
        assert_eq!(ceil_div(256, 256), 1);
        assert_eq!(ceil_div(257, 256), 2);
    }
}
