//! Top-level keys: Kineto's metadata, `deviceProperties`, and the `"warpscope"` object a
//! trace written by warpscope carries.

use super::ChromeState;
use super::classify::lane_from_text;
use crate::builder::{ProfileBuilder, TIME_LIMIT_NS};
use crate::import::json::{self, Parser, SyntaxError, Value};
use crate::model::{Device, DistributedInfo, TimeOrigin, TraceId, TrackKey, Warning};

/// Top-level keys whose value [`ChromeState::top_level`] reads; the values of others are
/// skipped without being kept.
const READ_TOP_LEVEL_KEYS: &[&str] = &[
    "schemaVersion",
    "baseTimeNanoseconds",
    "deviceProperties",
    "computeProperties",
    "warpscope",
    "distributedInfo",
    "displayTimeUnit",
    "traceName",
    "trace_id",
    "cupti_version",
    "cuda_runtime_version",
    "cuda_driver_version",
    "record_shapes",
    "with_stack",
    "with_flops",
    "with_modules",
    "profile_memory",
    "roctracer_version",
    "hip_runtime_version",
    "hip_driver_version",
];

/// True for a top-level key whose value is read.
pub(super) fn is_read_top_level_key(key: &str) -> bool {
    READ_TOP_LEVEL_KEYS.contains(&key)
}

impl ChromeState {
    pub(super) fn top_level(&mut self, key: &str, value: &[u8]) {
        let mut p = Parser::new(value);
        let v = p.value();
        let text = |v: &Result<Value<'_>, SyntaxError>| -> Option<String> {
            match v {
                Ok(Value::Str(s)) => Some(s.to_string()),
                Ok(Value::Num(n)) => Some(String::from_utf8_lossy(n).into_owned()),
                _ => None,
            }
        };
        match key {
            "schemaVersion" => {
                self.is_kineto = true;
                self.b.source.schema_version = text(&v);
            }
            "baseTimeNanoseconds" => {
                self.is_kineto = true;
                let base = match &v {
                    Ok(Value::Num(n)) => json::int_from_text(n),
                    Ok(Value::Str(s)) => s.trim().parse().ok(),
                    _ => None,
                };
                // A Unix time in nanoseconds between 1970 and 2116 (the builder's time limit):
                // anything else would put the trace's wall-clock times centuries away.
                self.base_time_ns = base.filter(|t| (0..TIME_LIMIT_NS).contains(t));
                if self.base_time_ns.is_none() {
                    self.b.warn(
                        "bad_base_time",
                        1,
                        "baseTimeNanoseconds is not a Unix time in nanoseconds between 1970 and \
                         2116; times are shown relative",
                    );
                }
            }
            "deviceProperties" | "computeProperties" => {
                self.is_kineto = true;
                let mut props = Parser::new(value);
                let devices = parse_device_properties(&mut props);
                if devices.is_none() {
                    self.b.warn(
                        "bad_device_properties",
                        1,
                        "deviceProperties could not be read; devices are named by number",
                    );
                }
                self.b.devices.extend(devices.unwrap_or_default());
            }
            "warpscope" => {
                self.carried = parse_carried(value, &mut self.b);
                if self.carried.is_none() {
                    self.b.warn(
                        "bad_warpscope_metadata",
                        1,
                        "the \"warpscope\" object could not be read; labels and the original \
                         source are not shown",
                    );
                }
            }
            "distributedInfo" => {
                let mut d = DistributedInfo::default();
                let mut p = Parser::new(value);
                let ok = p.object(|p, k| {
                    match (k, p.value()?) {
                        (b"backend", Value::Str(s)) => d.backend = Some(s.into_owned()),
                        (b"rank", Value::Num(n)) => d.rank = json::int_from_text(n),
                        (b"world_size", Value::Num(n)) => d.world_size = json::int_from_text(n),
                        _ => {}
                    }
                    Ok(())
                });
                if ok.is_ok() {
                    self.b.distributed = Some(d);
                }
            }
            "displayTimeUnit"
            | "traceName"
            | "trace_id"
            | "cupti_version"
            | "cuda_runtime_version"
            | "cuda_driver_version"
            | "record_shapes"
            | "with_stack"
            | "with_flops"
            | "with_modules"
            | "profile_memory"
            | "roctracer_version"
            | "hip_runtime_version"
            | "hip_driver_version" => {
                if let Some(t) = text(&v) {
                    if matches!(
                        key,
                        "cupti_version" | "cuda_runtime_version" | "cuda_driver_version"
                    ) || super::amd::ROCM_TOP_LEVEL_KEYS.contains(&key)
                    {
                        self.is_kineto = true;
                    }
                    // A repeated key replaces its value (the list holds each key once, so
                    // this search is short).
                    let details = &mut self.b.source.details;
                    match details.iter_mut().find(|(k, _)| k == key) {
                        Some(entry) => entry.1 = t,
                        None => details.push((key.to_string(), t)),
                    }
                }
            }
            _ => {}
        }
    }
}

/// Parses Kineto's `deviceProperties` array.
pub(super) fn parse_device_properties(p: &mut Parser<'_>) -> Option<Vec<Device>> {
    let mut devices = Vec::new();
    p.array(|p| {
        let mut d = Device::default();
        let mut major = None;
        let mut minor = None;
        p.object(|p, k| {
            let key = String::from_utf8_lossy(k).into_owned();
            let v = p.value()?;
            let text = match &v {
                Value::Num(n) => String::from_utf8_lossy(n).into_owned(),
                Value::Str(s) => s.to_string(),
                Value::Bool(b) => b.to_string(),
                _ => return Ok(()),
            };
            let int = json::int_from_text(text.as_bytes());
            match key.as_str() {
                "id" => d.id = int.and_then(|v| u32::try_from(v).ok()).unwrap_or(0),
                "name" => d.name = text,
                "totalGlobalMem" => d.memory_bytes = int.and_then(|v| u64::try_from(v).ok()),
                "computeMajor" | "major" => major = int.and_then(|v| u32::try_from(v).ok()),
                "computeMinor" | "minor" => minor = int.and_then(|v| u32::try_from(v).ok()),
                "numSms" => {
                    d.sm_count = int.and_then(|v| u32::try_from(v).ok());
                    d.properties.push((key, text));
                }
                // Written by warpscope's exporter.
                "memoryBandwidthBytesPerSecond" => {
                    d.memory_bandwidth_bytes_per_s = int.and_then(|v| u64::try_from(v).ok());
                }
                _ => d.properties.push((key, text)),
            }
            Ok(())
        })?;
        if let (Some(a), Some(b)) = (major, minor) {
            d.compute_capability = Some((a, b));
        }
        devices.push(d);
        Ok(())
    })
    .ok()?;
    Some(devices)
}

/// What a trace written by warpscope's exporter says about the profile it came from: its
/// top-level `"warpscope"` object (see `crate::write::chrome` for the layout).
#[derive(Debug, Default)]
pub(super) struct Carried {
    pub(super) path: Option<String>,
    pub(super) format: Option<String>,
    pub(super) tool: Option<String>,
    pub(super) tool_version: Option<String>,
    pub(super) schema_version: Option<String>,
    pub(super) details: Vec<(String, String)>,
    /// Time zero of the original profile; event times in the file are relative to it.
    pub(super) origin: Option<TimeOrigin>,
    pub(super) labels: Vec<(String, String)>,
    pub(super) warnings: Vec<Warning>,
    /// Track names and sort indices by key.
    pub(super) tracks: Vec<(TrackKey, String, Option<i64>)>,
}

/// Text of a string or number value; `None` for null and anything else.
pub(super) fn text_of(v: &Value<'_>) -> Option<String> {
    match v {
        Value::Str(s) => Some(s.to_string()),
        Value::Num(n) => Some(String::from_utf8_lossy(n).into_owned()),
        _ => None,
    }
}

pub(super) fn int_of(v: &Value<'_>) -> Option<i64> {
    match v {
        Value::Num(n) => json::int_from_text(n),
        _ => None,
    }
}

/// `[["key", "value"], ...]`.
pub(super) fn string_pairs(text: &[u8]) -> Result<Vec<(String, String)>, SyntaxError> {
    let mut out = Vec::new();
    Parser::new(text).array(|p| {
        if let Value::Array(pair) = p.value()? {
            let mut items = Vec::new();
            Parser::new(pair).array(|p| {
                items.extend(text_of(&p.value()?));
                Ok(())
            })?;
            if let Ok([k, v]) = <[String; 2]>::try_from(items) {
                out.push((k, v));
            }
        }
        Ok(())
    })?;
    Ok(out)
}

/// Reads the top-level `"warpscope"` object; `None` if it is not an object.
pub(super) fn parse_carried(value: &[u8], b: &mut ProfileBuilder) -> Option<Carried> {
    let mut c = Carried::default();
    let mut p = Parser::new(value);
    p.object(|p, key| {
        match (key, p.value()?) {
            (b"source", Value::Object(text)) => Parser::new(text).object(|p, k| {
                let v = p.value()?;
                match k {
                    b"path" => c.path = text_of(&v),
                    b"format" => c.format = text_of(&v),
                    b"tool" => c.tool = text_of(&v),
                    b"tool_version" => c.tool_version = text_of(&v),
                    b"schema_version" => c.schema_version = text_of(&v),
                    b"details" => {
                        if let Value::Array(t) = v {
                            c.details = string_pairs(t)?;
                        }
                    }
                    _ => {}
                }
                Ok(())
            })?,
            (b"origin", Value::Object(text)) => {
                let mut origin = TimeOrigin::default();
                let mut raw = None;
                Parser::new(text).object(|p, k| {
                    let v = p.value()?;
                    match k {
                        b"raw_ns" => raw = int_of(&v),
                        b"unix_ns" => origin.unix_ns = int_of(&v),
                        _ => {}
                    }
                    Ok(())
                })?;
                c.origin = raw.map(|raw_ns| TimeOrigin { raw_ns, ..origin });
            }
            (b"labels", Value::Array(text)) => c.labels = string_pairs(text)?,
            (b"warnings", Value::Array(text)) => Parser::new(text).array(|p| {
                let Value::Object(w) = p.value()? else {
                    return Ok(());
                };
                let (mut code, mut message, mut count) = (None, None, None);
                Parser::new(w).object(|p, k| {
                    let v = p.value()?;
                    match k {
                        b"code" => code = text_of(&v),
                        b"message" => message = text_of(&v),
                        b"count" => count = int_of(&v).and_then(|n| u64::try_from(n).ok()),
                        _ => {}
                    }
                    Ok(())
                })?;
                if let Some(code) = code {
                    c.warnings.push(Warning {
                        code,
                        message: message.unwrap_or_default(),
                        count: count.unwrap_or(1),
                    });
                }
                Ok(())
            })?,
            (b"tracks", Value::Array(text)) => Parser::new(text).array(|p| {
                let Value::Object(t) = p.value()? else {
                    return Ok(());
                };
                if let Some(track) = parse_carried_track(t, b)? {
                    c.tracks.push(track);
                }
                Ok(())
            })?,
            _ => {}
        }
        Ok(())
    })
    .ok()?;
    Some(c)
}

/// `{"device", "context", "stream", "lane"}` of a GPU track in the `tracks` list.
pub(super) fn parse_carried_gpu_key(text: &[u8]) -> Result<Option<TrackKey>, SyntaxError> {
    let (mut device, mut context, mut stream, mut lane) = (None, None, None, None);
    Parser::new(text).object(|p, k| {
        let v = p.value()?;
        let int = int_of(&v);
        match k {
            b"device" => device = int.and_then(|n| u32::try_from(n).ok()),
            b"context" => context = int.and_then(|n| u32::try_from(n).ok()),
            b"stream" => stream = int.and_then(|n| u64::try_from(n).ok()),
            b"lane" => lane = text_of(&v).and_then(|t| lane_from_text(&t)).flatten(),
            _ => {}
        }
        Ok(())
    })?;
    Ok(match (device, context, stream, lane) {
        (Some(device), Some(context), Some(stream), Some(lane)) => Some(TrackKey::Gpu {
            device,
            context,
            stream,
            lane,
        }),
        _ => None,
    })
}

/// One entry of the `tracks` list: `{"gpu": {"device", "context", "stream", "lane"}, "name",
/// "sort_index"}` or `{"pid", "tid", "name", "sort_index"}`.
pub(super) fn parse_carried_track(
    text: &[u8],
    b: &mut ProfileBuilder,
) -> Result<Option<(TrackKey, String, Option<i64>)>, SyntaxError> {
    let mut gpu = None;
    let (mut pid, mut tid, mut name, mut sort_index) = (None, None, None, None);
    let mut id = |v: &Value<'_>| -> Option<TraceId> {
        match v {
            Value::Num(n) => json::int_from_text(n).map(TraceId::Int),
            Value::Str(s) => Some(match s.trim().parse::<i64>() {
                Ok(v) => TraceId::Int(v),
                Err(_) => TraceId::Name(b.intern(s)),
            }),
            _ => None,
        }
    };
    Parser::new(text).object(|p, k| {
        let v = p.value()?;
        match (k, &v) {
            (b"gpu", Value::Object(g)) => gpu = parse_carried_gpu_key(g)?,
            (b"pid", v) => pid = id(v),
            (b"tid", v) => tid = id(v),
            (b"name", v) => name = text_of(v),
            (b"sort_index", v) => sort_index = int_of(v),
            _ => {}
        }
        Ok(())
    })?;
    let key = match (gpu, pid, tid) {
        (Some(key), _, _) => key,
        (None, Some(pid), Some(tid)) => TrackKey::Thread { pid, tid },
        _ => return Ok(None),
    };
    Ok(name.map(|n| (key, n, sort_index)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Format, GpuLane};

    #[test]
    fn the_warpscope_object_is_read() {
        let mut b = ProfileBuilder::new("x.json".into(), Format::ChromeJson);
        let c = parse_carried(
            br#"{"version": 1, "future key": [1, {"x": 2}],
                "source": {"path": "/r/a.live", "format": "live", "tool": "warpscope live",
                           "tool_version": null, "schema_version": "3",
                           "details": [["k", "v"], ["bad"], ["k2", "v \"2\""]]},
                "origin": {"raw_ns": -5, "unix_ns": null},
                "labels": [["batch", "32"]],
                "warnings": [{"code": "c", "message": "m", "count": 3}],
                "tracks": [{"gpu": {"device": 1, "context": 2, "stream": 3, "lane": "annotations"},
                            "name": "s3", "sort_index": null},
                           {"pid": 7, "tid": "CUDA API", "name": "api", "sort_index": 4},
                           {"pid": 7, "name": "no tid"}]}"#,
            &mut b,
        )
        .unwrap();
        assert_eq!(c.tool.as_deref(), Some("warpscope live"));
        assert_eq!(c.tool_version, None);
        assert_eq!(c.schema_version.as_deref(), Some("3"));
        assert_eq!(c.format.as_deref(), Some("live"));
        assert_eq!(c.details.len(), 2);
        assert_eq!(c.details[1].1, "v \"2\"");
        assert_eq!(
            c.origin,
            Some(TimeOrigin {
                raw_ns: -5,
                unix_ns: None
            })
        );
        assert_eq!(c.labels, vec![("batch".to_string(), "32".to_string())]);
        assert_eq!(c.warnings[0].count, 3);
        assert_eq!(c.tracks.len(), 2);
        assert_eq!(
            c.tracks[0].0,
            TrackKey::Gpu {
                device: 1,
                context: 2,
                stream: 3,
                lane: GpuLane::Annotations
            }
        );
        let api = b.intern("CUDA API");
        assert_eq!(
            c.tracks[1],
            (
                TrackKey::Thread {
                    pid: TraceId::Int(7),
                    tid: TraceId::Name(api)
                },
                "api".to_string(),
                Some(4)
            )
        );
        assert!(parse_carried(b"[1, 2]", &mut b).is_none());
    }
}
