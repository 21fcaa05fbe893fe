//! Configuration bring-up: station MAC and IPv4 address, the GID table.
//!
//! RoCE v2 GIDs are IPv6 addresses: entry 0 is the link-local address made
//! from the MAC (modified EUI-64, RFC 4291 appendix A), entry 1 the
//! IPv4-mapped address `::ffff:a.b.c.d` (RFC 4291 §2.5.5.2) that RoCE v2
//! uses for IPv4 traffic.

use crate::regs::Regs;
use roce_regs::{cfg, ResultCode};

/// GID entry holding the link-local (MAC-derived) GID after [`sync_gids`].
pub const GID_LINK_LOCAL: u32 = 0;
/// GID entry holding the IPv4-mapped GID after [`sync_gids`].
pub const GID_IPV4: u32 = 1;

/// Station addresses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Station {
    /// MAC address, byte 0 first on the wire.
    pub mac: [u8; 6],
    /// IPv4 address, byte 0 first on the wire.
    pub ipv4: [u8; 4],
}

/// The link-local GID of `mac`: fe80::/64 with the modified EUI-64
/// interface identifier (universal/local bit flipped, ff:fe in the middle).
pub fn link_local_gid(mac: [u8; 6]) -> [u8; 16] {
    let mut g = [0u8; 16];
    g[0] = 0xfe;
    g[1] = 0x80;
    g[8] = mac[0] ^ 0x02;
    g[9] = mac[1];
    g[10] = mac[2];
    g[11] = 0xff;
    g[12] = 0xfe;
    g[13] = mac[3];
    g[14] = mac[4];
    g[15] = mac[5];
    g
}

/// The IPv4-mapped GID of `ip`: `::ffff:a.b.c.d`.
pub fn ipv4_mapped_gid(ip: [u8; 4]) -> [u8; 16] {
    let mut g = [0u8; 16];
    g[10] = 0xff;
    g[11] = 0xff;
    g[12..].copy_from_slice(&ip);
    g
}

/// Write the station MAC and IPv4 address.
pub fn set_station<R: Regs>(r: &mut R, s: &Station) {
    let m = s.mac;
    r.write32(
        cfg::mac_hi::ADDR,
        cfg::mac_hi::MAC.val(u32::from(u16::from_be_bytes([m[0], m[1]]))),
    );
    r.write32(
        cfg::mac_lo::ADDR,
        u32::from_be_bytes([m[2], m[3], m[4], m[5]]),
    );
    r.write32(cfg::ipv4::ADDR, u32::from_be_bytes(s.ipv4));
}

/// Read the station MAC and IPv4 address.
pub fn station<R: Regs>(r: &mut R) -> Station {
    let hi = (cfg::mac_hi::MAC.get(r.read32(cfg::mac_hi::ADDR)) as u16).to_be_bytes();
    let lo = r.read32(cfg::mac_lo::ADDR).to_be_bytes();
    Station {
        mac: [hi[0], hi[1], lo[0], lo[1], lo[2], lo[3]],
        ipv4: r.read32(cfg::ipv4::ADDR).to_be_bytes(),
    }
}

const GID_WORDS: [fn(u32) -> u32; 4] = [
    cfg::gid_w0::addr,
    cfg::gid_w1::addr,
    cfg::gid_w2::addr,
    cfg::gid_w3::addr,
];

/// Write GID table entry `index`.
pub fn set_gid<R: Regs>(r: &mut R, index: u32, gid: [u8; 16]) -> Result<(), ResultCode> {
    if index >= cfg::caps::GID_COUNT.get(r.read32(cfg::caps::ADDR)) {
        return Err(ResultCode::BadGidIndex);
    }
    for (w, addr) in GID_WORDS.iter().enumerate() {
        let b = &gid[4 * w..4 * w + 4];
        r.write32(addr(index), u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
    }
    Ok(())
}

/// Read GID table entry `index`.
pub fn gid<R: Regs>(r: &mut R, index: u32) -> Result<[u8; 16], ResultCode> {
    if index >= cfg::caps::GID_COUNT.get(r.read32(cfg::caps::ADDR)) {
        return Err(ResultCode::BadGidIndex);
    }
    let mut g = [0u8; 16];
    for (w, addr) in GID_WORDS.iter().enumerate() {
        g[4 * w..4 * w + 4].copy_from_slice(&r.read32(addr(index)).to_be_bytes());
    }
    Ok(g)
}

/// Rewrite GID entries [`GID_LINK_LOCAL`] and [`GID_IPV4`] from the station
/// addresses in `cfg` (the `sync-gids` mailbox command).
pub fn sync_gids<R: Regs>(r: &mut R) -> Result<(), ResultCode> {
    let s = station(r);
    set_gid(r, GID_LINK_LOCAL, link_local_gid(s.mac))?;
    set_gid(r, GID_IPV4, ipv4_mapped_gid(s.ipv4))
}

/// Bring the station up: addresses, then the GIDs derived from them.
pub fn bring_up<R: Regs>(r: &mut R, s: &Station) -> Result<(), ResultCode> {
    set_station(r, s);
    sync_gids(r)
}
