//! Frame descriptors as JSON, for `roce-sim emit`: the DESIGN §7 field names
//! plus MACs, IP addresses and the payload.
//!
//! ```json
//! {"frames": [{"ip": 4, "dst_mac": "02:00:00:00:00:0b", "src_mac": "02:00:00:00:00:0a",
//!   "dst_ip": "10.0.0.2", "src_ip": "10.0.0.1", "opcode": 4, "destqp": 291, "psn": 256,
//!   "payload": "00112233"}]}
//! ```
//!
//! Required: `dst_mac`, `src_mac`, `dst_ip`, `src_ip`, `opcode`, `destqp`,
//! `psn`, and every extension header the opcode has (`reth`, `aeth`,
//! `immdt`, `ieth`, `atomiceth`, `atomicacketh`, `deth`, same members as
//! `roce-sim parse` prints). Optional, with defaults: `ip` (4), `vlan`
//! (`{"pcp", "dei", "vid"}`, none), `tos` (0; the traffic class for IPv6),
//! `ttl` (64; the hop limit), `flow_label` (0), `ident` (0), `df` (true),
//! `src_port` (0xC000), `se`, `m`, `fecn`, `becn`, `ackreq` (false), `pkey`
//! (0xFFFF), `payload` (hex, empty). Unknown keys are errors.

use roce_wire::aeth::Syndrome;
use roce_wire::ext::{AethRepr, AtomicAckEthRepr, AtomicEthRepr, DethRepr, ExtHeaders, RethRepr};
use roce_wire::{
    BthRepr, EthernetRepr, ExtKind, FrameRepr, IpRepr, Ipv4Repr, Ipv6Repr, Opcode, Psn, UdpRepr,
    VlanTag,
};
use serde_json::{json, Map, Value};
use std::fmt::Write as _;

const KEYS: &[&str] = &[
    "ip",
    "dst_mac",
    "src_mac",
    "vlan",
    "dst_ip",
    "src_ip",
    "tos",
    "ttl",
    "flow_label",
    "ident",
    "df",
    "src_port",
    "opcode",
    "se",
    "m",
    "pkey",
    "fecn",
    "becn",
    "destqp",
    "ackreq",
    "psn",
    "reth",
    "aeth",
    "immdt",
    "ieth",
    "atomiceth",
    "atomicacketh",
    "deth",
    "payload",
];

struct Obj<'a> {
    m: &'a Map<String, Value>,
    at: String,
}

impl Obj<'_> {
    fn get(&self, k: &str) -> Option<&Value> {
        self.m.get(k)
    }
    fn uint(&self, k: &str, max: u64, default: Option<u64>) -> Result<u64, String> {
        match self.get(k) {
            None => default.ok_or_else(|| format!("{}: missing \"{k}\"", self.at)),
            Some(v) => match v.as_u64() {
                Some(n) if n <= max => Ok(n),
                _ => Err(format!(
                    "{}: \"{k}\" must be an integer in 0..={max}, not {v}",
                    self.at
                )),
            },
        }
    }
    fn flag(&self, k: &str, default: bool) -> Result<bool, String> {
        match self.get(k) {
            None => Ok(default),
            Some(Value::Bool(b)) => Ok(*b),
            Some(v) => Err(format!(
                "{}: \"{k}\" must be true or false, not {v}",
                self.at
            )),
        }
    }
    fn text(&self, k: &str) -> Result<&str, String> {
        match self.get(k) {
            Some(Value::String(s)) => Ok(s),
            Some(v) => Err(format!("{}: \"{k}\" must be a string, not {v}", self.at)),
            None => Err(format!("{}: missing \"{k}\"", self.at)),
        }
    }
    fn sub(&self, k: &str) -> Result<Obj<'_>, String> {
        match self.get(k) {
            Some(Value::Object(m)) => Ok(Obj {
                m,
                at: format!("{}.{k}", self.at),
            }),
            Some(v) => Err(format!("{}: \"{k}\" must be an object, not {v}", self.at)),
            None => Err(format!("{}: missing \"{k}\" (the opcode has it)", self.at)),
        }
    }
}

fn parse_mac(s: &str, at: &str) -> Result<[u8; 6], String> {
    let parts: Vec<&str> = s.split(':').collect();
    let bytes: Option<Vec<u8>> = parts
        .iter()
        .map(|p| u8::from_str_radix(p, 16).ok())
        .collect();
    match bytes {
        Some(b) if b.len() == 6 && parts.iter().all(|p| p.len() == 2) => Ok(b.try_into().unwrap()),
        _ => Err(format!(
            "{at}: \"{s}\" is not a MAC address like 02:00:00:00:00:0a"
        )),
    }
}

fn parse_hex(s: &str, at: &str) -> Result<Vec<u8>, String> {
    if s.len() % 2 != 0 || !s.bytes().all(|c| c.is_ascii_hexdigit()) {
        return Err(format!(
            "{at}: \"payload\" must be an even number of hex digits"
        ));
    }
    Ok((0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect())
}

/// One descriptor object → headers and payload.
pub fn from_json(v: &Value, index: usize) -> Result<(FrameRepr, Vec<u8>), String> {
    let at = format!("frame {index}");
    let m = v
        .as_object()
        .ok_or_else(|| format!("{at}: not an object"))?;
    if let Some(k) = m.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(format!("{at}: unknown key \"{k}\""));
    }
    let o = Obj { m, at: at.clone() };
    let opcode = Opcode(o.uint("opcode", 255, None)? as u8);
    let info = opcode
        .info()
        .ok_or_else(|| format!("{at}: opcode {} is not in the opcode table", opcode.0))?;
    let version = o.uint("ip", 6, Some(4))?;
    let (tos, ttl) = (
        o.uint("tos", 255, Some(0))? as u8,
        o.uint("ttl", 255, Some(64))? as u8,
    );
    let ip = match version {
        4 => IpRepr::V4(Ipv4Repr {
            tos,
            ident: o.uint("ident", 0xFFFF, Some(0))? as u16,
            dont_frag: o.flag("df", true)?,
            ttl,
            protocol: 17,
            src: o
                .text("src_ip")?
                .parse::<std::net::Ipv4Addr>()
                .map_err(|e| format!("{at}: src_ip: {e}"))?
                .octets(),
            dst: o
                .text("dst_ip")?
                .parse::<std::net::Ipv4Addr>()
                .map_err(|e| format!("{at}: dst_ip: {e}"))?
                .octets(),
            payload_len: 0,
        }),
        6 => IpRepr::V6(Ipv6Repr {
            traffic_class: tos,
            flow_label: o.uint("flow_label", 0xF_FFFF, Some(0))? as u32,
            hop_limit: ttl,
            next_header: 17,
            src: o
                .text("src_ip")?
                .parse::<std::net::Ipv6Addr>()
                .map_err(|e| format!("{at}: src_ip: {e}"))?
                .octets(),
            dst: o
                .text("dst_ip")?
                .parse::<std::net::Ipv6Addr>()
                .map_err(|e| format!("{at}: dst_ip: {e}"))?
                .octets(),
            payload_len: 0,
        }),
        n => return Err(format!("{at}: \"ip\" must be 4 or 6, not {n}")),
    };
    let vlan = match o.get("vlan") {
        None | Some(Value::Null) => None,
        Some(_) => {
            let t = o.sub("vlan")?;
            Some(VlanTag {
                pcp: t.uint("pcp", 7, Some(0))? as u8,
                dei: t.flag("dei", false)?,
                vid: t.uint("vid", 0xFFF, None)? as u16,
            })
        }
    };
    let mut ext = ExtHeaders::default();
    for &k in info.headers {
        match k {
            ExtKind::Reth => {
                let r = o.sub("reth")?;
                ext.reth = Some(RethRepr {
                    va: r.uint("va", u64::MAX, None)?,
                    rkey: r.uint("rkey", u32::MAX as u64, None)? as u32,
                    dma_len: r.uint("dmalen", u32::MAX as u64, None)? as u32,
                });
            }
            ExtKind::Aeth => {
                let r = o.sub("aeth")?;
                ext.aeth = Some(AethRepr {
                    syndrome: Syndrome::from_byte(r.uint("syndrome", 255, None)? as u8),
                    msn: r.uint("msn", Psn::MASK as u64, None)? as u32,
                });
            }
            ExtKind::ImmDt => ext.immdt = Some(o.uint("immdt", u32::MAX as u64, None)? as u32),
            ExtKind::Ieth => ext.ieth = Some(o.uint("ieth", u32::MAX as u64, None)? as u32),
            ExtKind::AtomicEth => {
                let r = o.sub("atomiceth")?;
                ext.atomic_eth = Some(AtomicEthRepr {
                    va: r.uint("va", u64::MAX, None)?,
                    rkey: r.uint("rkey", u32::MAX as u64, None)? as u32,
                    swap_add: r.uint("swap_add", u64::MAX, None)?,
                    compare: r.uint("compare", u64::MAX, None)?,
                });
            }
            ExtKind::AtomicAckEth => {
                let r = o.sub("atomicacketh")?;
                ext.atomic_ack_eth = Some(AtomicAckEthRepr {
                    orig_remote_data: r.uint("orig_remote_data", u64::MAX, None)?,
                });
            }
            ExtKind::Deth => {
                let r = o.sub("deth")?;
                ext.deth = Some(DethRepr {
                    qkey: r.uint("qkey", u32::MAX as u64, None)? as u32,
                    src_qp: r.uint("srcqp", Psn::MASK as u64, None)? as u32,
                });
            }
            ExtKind::Cnp => {}
        }
    }
    if let Some(k) = [
        "reth",
        "aeth",
        "immdt",
        "ieth",
        "atomiceth",
        "atomicacketh",
        "deth",
    ]
    .iter()
    .zip([
        ExtKind::Reth,
        ExtKind::Aeth,
        ExtKind::ImmDt,
        ExtKind::Ieth,
        ExtKind::AtomicEth,
        ExtKind::AtomicAckEth,
        ExtKind::Deth,
    ])
    .find(|(name, kind)| o.get(name).is_some() && !info.has(*kind))
    {
        return Err(format!(
            "{at}: opcode {} ({}) has no \"{}\"",
            opcode.0, info.name, k.0
        ));
    }
    let payload = match o.get("payload") {
        None => Vec::new(),
        Some(_) => parse_hex(o.text("payload")?, &at)?,
    };
    if !info.has_payload() && !payload.is_empty() {
        return Err(format!(
            "{at}: opcode {} ({}) carries no payload",
            opcode.0, info.name
        ));
    }
    let mut repr = FrameRepr {
        eth: EthernetRepr {
            dst: parse_mac(o.text("dst_mac")?, &at)?,
            src: parse_mac(o.text("src_mac")?, &at)?,
            vlan,
            ethertype: 0,
        },
        ip,
        udp: UdpRepr {
            src_port: o.uint("src_port", 0xFFFF, Some(0xC000))? as u16,
            dst_port: roce_wire::udp::ROCE_V2_PORT,
            checksum: 0,
            payload_len: 0,
        },
        bth: BthRepr {
            opcode,
            solicited: o.flag("se", false)?,
            mig_req: o.flag("m", false)?,
            pad_count: 0,
            tver: 0,
            pkey: o.uint("pkey", 0xFFFF, Some(0xFFFF))? as u16,
            fecn: o.flag("fecn", false)?,
            becn: o.flag("becn", false)?,
            dest_qp: o.uint("destqp", Psn::MASK as u64, None)? as u32,
            ack_req: o.flag("ackreq", false)?,
            psn: Psn::new(o.uint("psn", Psn::MASK as u64, None)? as u32),
        },
        ext,
        payload_len: payload.len(),
    };
    repr.sync_lengths();
    Ok((repr, payload))
}

/// The `{"frames": [...]}` document → every frame.
pub fn parse_document(text: &str) -> Result<Vec<(FrameRepr, Vec<u8>)>, String> {
    let doc: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let frames = doc
        .get("frames")
        .and_then(Value::as_array)
        .ok_or("expected an object with a \"frames\" array")?;
    frames
        .iter()
        .enumerate()
        .map(|(i, v)| from_json(v, i + 1))
        .collect()
}

fn mac_text(m: [u8; 6]) -> String {
    m.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// Headers and payload → a descriptor object (what `from_json` reads back).
pub fn to_json(r: &FrameRepr, payload: &[u8]) -> Value {
    let b = &r.bth;
    let mut o = json!({
        "ip": r.ip.version(), "dst_mac": mac_text(r.eth.dst), "src_mac": mac_text(r.eth.src),
        "src_port": r.udp.src_port, "opcode": b.opcode.0, "se": b.solicited, "m": b.mig_req,
        "pkey": b.pkey, "fecn": b.fecn, "becn": b.becn, "destqp": b.dest_qp, "ackreq": b.ack_req,
        "psn": b.psn.value(),
    });
    let m = o.as_object_mut().unwrap();
    match r.ip {
        IpRepr::V4(ip) => {
            m.insert(
                "src_ip".into(),
                std::net::Ipv4Addr::from(ip.src).to_string().into(),
            );
            m.insert(
                "dst_ip".into(),
                std::net::Ipv4Addr::from(ip.dst).to_string().into(),
            );
            m.insert("tos".into(), ip.tos.into());
            m.insert("ttl".into(), ip.ttl.into());
            m.insert("ident".into(), ip.ident.into());
            m.insert("df".into(), ip.dont_frag.into());
        }
        IpRepr::V6(ip) => {
            m.insert(
                "src_ip".into(),
                std::net::Ipv6Addr::from(ip.src).to_string().into(),
            );
            m.insert(
                "dst_ip".into(),
                std::net::Ipv6Addr::from(ip.dst).to_string().into(),
            );
            m.insert("tos".into(), ip.traffic_class.into());
            m.insert("ttl".into(), ip.hop_limit.into());
            m.insert("flow_label".into(), ip.flow_label.into());
        }
    }
    if let Some(t) = r.eth.vlan {
        m.insert(
            "vlan".into(),
            json!({"pcp": t.pcp, "dei": t.dei, "vid": t.vid}),
        );
    }
    let e = &r.ext;
    if let Some(x) = e.reth {
        m.insert(
            "reth".into(),
            json!({"va": x.va, "rkey": x.rkey, "dmalen": x.dma_len}),
        );
    }
    if let Some(x) = e.aeth {
        m.insert(
            "aeth".into(),
            json!({"syndrome": x.syndrome.to_byte(), "msn": x.msn}),
        );
    }
    if let Some(x) = e.immdt {
        m.insert("immdt".into(), x.into());
    }
    if let Some(x) = e.ieth {
        m.insert("ieth".into(), x.into());
    }
    if let Some(x) = e.atomic_eth {
        m.insert(
            "atomiceth".into(),
            json!({"va": x.va, "rkey": x.rkey, "swap_add": x.swap_add, "compare": x.compare}),
        );
    }
    if let Some(x) = e.atomic_ack_eth {
        m.insert(
            "atomicacketh".into(),
            json!({"orig_remote_data": x.orig_remote_data}),
        );
    }
    if let Some(x) = e.deth {
        m.insert("deth".into(), json!({"qkey": x.qkey, "srcqp": x.src_qp}));
    }
    let mut hex = String::with_capacity(2 * payload.len());
    for byte in payload {
        write!(hex, "{byte:02x}").unwrap();
    }
    m.insert("payload".into(), hex.into());
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::traffic::FrameGen;

    #[test]
    fn round_trips_random_frames() {
        let mut g = FrameGen::new(9);
        for i in 0..500 {
            let (mut r, p) = g.frame_with_opcode(i % roce_wire::opcode::TABLE.len());
            r.udp.checksum = 0;
            let v = to_json(&r, &p);
            let (r2, p2) = from_json(&v, i).unwrap();
            assert_eq!((r2, p2), (r, p), "{v}");
        }
    }

    #[test]
    fn errors_name_the_frame_and_field() {
        let ok = r#"{"dst_mac": "02:00:00:00:00:0b", "src_mac": "02:00:00:00:00:0a", "dst_ip": "10.0.0.2", "src_ip": "10.0.0.1", "opcode": 4, "destqp": 1, "psn": 2}"#;
        let v: Value = serde_json::from_str(ok).unwrap();
        assert!(from_json(&v, 1).is_ok());
        for (edit, needle) in [
            (("opcode", json!(0x1f)), "not in the opcode table"),
            (
                ("psn", json!(1u64 << 24)),
                "\"psn\" must be an integer in 0..=16777215",
            ),
            (("dst_mac", json!("02:00")), "is not a MAC address"),
            (("src_ip", json!("fd00::1")), "src_ip"),
            (("payload", json!("abc")), "even number of hex digits"),
            (("colour", json!(1)), "unknown key \"colour\""),
            (
                ("reth", json!({"va": 1, "rkey": 2, "dmalen": 3})),
                "has no \"reth\"",
            ),
        ] {
            let mut w = v.clone();
            w.as_object_mut().unwrap().insert(edit.0.into(), edit.1);
            let e = from_json(&w, 7).unwrap_err();
            assert!(e.starts_with("frame 7") && e.contains(needle), "{e}");
        }
        let mut ack = v.clone();
        ack["opcode"] = json!(0x11);
        assert!(from_json(&ack, 3).unwrap_err().contains("missing \"aeth\""));
    }
}
