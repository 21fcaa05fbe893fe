//! Every reference frame of `vectors/roce_v2.json` (built by scapy,
//! cross-checked with Wireshark) gets exactly its expected verdict, reason
//! and fields from `Frame::parse`, and every accepted frame is rebuilt byte
//! for byte by `FrameRepr::emit`.

use roce_wire::json::Line;
use roce_wire::{DropReason, Frame};
use serde_json::Value;

fn vectors() -> Vec<Value> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../vectors/roce_v2.json");
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let doc: Value = serde_json::from_str(&text).expect("vectors JSON");
    assert_eq!(doc["schema"], "roce-sim parse v1");
    let frames = doc["frames"].as_array().expect("frames").clone();
    assert_eq!(frames.len(), 83);
    frames
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// The JSON line the library prints, parsed back, against the expectation.
#[test]
fn every_vector_gets_its_verdict_reason_and_fields() {
    for v in vectors() {
        let n = v["frame"].as_u64().unwrap();
        let name = v["name"].as_str().unwrap();
        let bytes = hex(v["hex"].as_str().unwrap());
        let parsed = Frame::parse(&bytes);
        let line = Line {
            frame: n,
            verdict: parsed.as_ref().map(|f| &f.repr).map_err(|e| *e),
        }
        .to_string();
        let got: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{line}: {e}"));
        let exp = &v["expect"];
        let mut want = serde_json::Map::new();
        want.insert("frame".into(), n.into());
        want.insert("verdict".into(), exp["verdict"].clone());
        want.insert("reason".into(), exp["reason"].clone());
        if let Some(fields) = exp["fields"].as_object() {
            want.extend(fields.clone());
        }
        assert_eq!(got, Value::Object(want), "frame {n} {name}");
        if let Some(r) = exp["reason"].as_str() {
            assert_eq!(parsed.unwrap_err(), DropReason::from_name(r).unwrap());
        }
    }
}

#[test]
fn every_accepted_vector_is_rebuilt_byte_for_byte() {
    let mut rebuilt = 0;
    for v in vectors() {
        let bytes = hex(v["hex"].as_str().unwrap());
        let Ok(frame) = Frame::parse(&bytes) else {
            continue;
        };
        let out = frame.repr.to_bytes(frame.payload).unwrap();
        assert_eq!(out, bytes, "frame {} {}", v["frame"], v["name"]);
        rebuilt += 1;
    }
    assert_eq!(rebuilt, 71);
}

/// Frames 63 and 64 differ only in masked fields and share one ICRC.
#[test]
fn masked_variants_share_the_icrc() {
    let f = vectors();
    let a = hex(f[62]["hex"].as_str().unwrap());
    let b = hex(f[63]["hex"].as_str().unwrap());
    assert_ne!(a, b);
    assert_eq!(a[a.len() - 4..], b[b.len() - 4..]);
    assert_eq!(
        Frame::parse(&a).unwrap().icrc,
        Frame::parse(&b).unwrap().icrc
    );
}
