//! Structural checks of the register map: every block starts with its
//! type/version word, nothing overlaps, every field fits its register,
//! reset values fit their fields, names are unique and well-formed, and the
//! value enums fit the fields that hold them.

use roce_regs::*;
use std::collections::{BTreeMap, BTreeSet};

fn is_lower_ident(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some('a'..='z')) && c.all(|c| matches!(c, 'a'..='z' | '0'..='9' | '_'))
}

fn is_upper_ident(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some('A'..='Z')) && c.all(|c| matches!(c, 'A'..='Z' | '0'..='9' | '_'))
}

#[test]
fn every_block_starts_with_its_id_word() {
    let mut types = BTreeSet::new();
    for b in MAP {
        let id = &b.registers[0];
        assert_eq!((id.name, id.offset, id.count), ("id", 0, 1), "{}", b.name);
        assert_eq!(id.access, Access::RO, "{}", b.name);
        assert_eq!(
            id.reset(),
            (u32::from(b.type_id) << 16) | u32::from(b.version)
        );
        assert_eq!(id.reset(), b.id_word());
        assert!(b.version >= 1, "{}", b.name);
        assert!(types.insert(b.type_id), "type {} used twice", b.type_id);
        // No other register sits at offset 0.
        assert!(b.registers[1..]
            .iter()
            .all(|r| (0..r.count).all(|i| r.element_offset(i) != 0)));
    }
}

#[test]
fn the_map_is_the_csr_blocks_and_the_host_blocks() {
    let mut want: Vec<&str> = BLOCKS.iter().chain(HOST_BLOCKS).map(|b| b.name).collect();
    want.sort();
    let mut got: Vec<&str> = MAP.iter().map(|b| b.name).collect();
    got.sort();
    assert_eq!(got, want);
    assert!(
        MAP.windows(2).all(|w| w[0].base < w[1].base),
        "MAP in address order"
    );
    for b in MAP {
        let from = BLOCKS.iter().chain(HOST_BLOCKS).find(|x| x.name == b.name);
        assert_eq!(from, Some(b));
    }
}

#[test]
fn queue_registers_cover_every_qp_and_cq() {
    use roce_regs::{db, hq};
    for r in [db::sq_pi::REG, db::rq_pi::REG] {
        assert_eq!((r.count, r.stride), (QP_COUNT, QP_DB_STRIDE), "{}", r.name);
    }
    for r in [db::cq_ci::REG, db::cq_arm::REG] {
        assert_eq!((r.count, r.stride), (CQ_COUNT, CQ_DB_STRIDE), "{}", r.name);
    }
    let ring = &hq::BLOCK.registers[3..];
    for r in ring {
        let per = if r.name.starts_with("cq_") {
            (CQ_COUNT, CQ_CTX_STRIDE)
        } else {
            (QP_COUNT, QP_RING_STRIDE)
        };
        assert_eq!((r.count, r.stride), per, "hq.{}", r.name);
    }
    // The doorbell page is apart from the contexts; a QP's ring context
    // is one stride, and QP_MAX / CQ_MAX of them fit their spans.
    assert_eq!(db::BLOCK.base % 0x1000, 0);
    assert_eq!(hq::sq_base_lo::REG.offset % QP_RING_STRIDE, 0);
    assert_eq!(
        hq::rq_ci::REG.offset + 4 - hq::sq_base_lo::REG.offset,
        QP_RING_STRIDE
    );
    assert_eq!(
        hq::cq_status::REG.offset + 4 - hq::cq_base_lo::REG.offset,
        CQ_CTX_STRIDE
    );
    const { assert!(hq::sq_base_lo::REG.offset + QP_MAX * QP_RING_STRIDE <= hq::BLOCK.size) };
    const { assert!(hq::cq_base_lo::REG.offset + CQ_MAX * CQ_CTX_STRIDE <= hq::sq_base_lo::REG.offset) };
    // Ring sizes and CQ numbers fit their fields.
    assert!(hq::sq_cfg::LOG_SIZE.max() >= queue::LOG_SIZE_MAX);
    assert!(hq::sq_cfg::CQN.max() >= CQ_MAX - 1);
    assert_eq!(db::sq_pi::PI.width, queue::INDEX_BITS);
    assert_eq!(hq::cq_status::PI.width, queue::INDEX_BITS);
    // The caps word says what the queue module says.
    let caps = hq::caps::REG.reset();
    assert_eq!(hq::caps::MAX_SGE.get(caps), queue::MAX_SGE);
    assert_eq!(1 << hq::caps::SWQE_LOG.get(caps), queue::SWQE_SIZE);
    assert_eq!(1 << hq::caps::RWQE_LOG.get(caps), queue::RWQE_SIZE);
    assert_eq!(1 << hq::caps::CQE_LOG.get(caps), queue::CQE_SIZE);
    assert_eq!(hq::caps::MAX_INLINE.get(caps), queue::MAX_INLINE);
}

#[test]
fn blocks_fit_the_window_without_overlap() {
    let mut spans: Vec<(u32, u32, &str)> = MAP.iter().map(|b| (b.base, b.size, b.name)).collect();
    spans.sort();
    for w in spans.windows(2) {
        assert!(w[0].0 + w[0].1 <= w[1].0, "{} overlaps {}", w[0].2, w[1].2);
    }
    for b in MAP {
        assert!(b.size.is_power_of_two(), "{}", b.name);
        assert_eq!(b.base % b.size, 0, "{} not aligned to its size", b.name);
        assert!(b.base + b.size <= CSR_WINDOW_SIZE, "{}", b.name);
    }
}

#[test]
fn no_two_registers_share_an_address() {
    for b in MAP {
        let mut seen: BTreeMap<u32, (&str, u32)> = BTreeMap::new();
        for r in b.registers {
            assert!(
                r.count >= 1 && r.stride >= 4 && r.stride % 4 == 0,
                "{}.{}",
                b.name,
                r.name
            );
            assert_eq!(r.offset % 4, 0, "{}.{}", b.name, r.name);
            for i in 0..r.count {
                let off = r.element_offset(i);
                assert!(
                    off + 4 <= b.size,
                    "{}.{}[{i}] outside the block",
                    b.name,
                    r.name
                );
                if let Some(prev) = seen.insert(off, (r.name, i)) {
                    panic!(
                        "{}.{}[{i}] overlaps {}.{}[{}] at {off:#x}",
                        b.name, r.name, b.name, prev.0, prev.1
                    );
                }
            }
        }
    }
}

#[test]
fn fields_fit_and_do_not_overlap() {
    for b in MAP {
        for r in b.registers {
            assert!(!r.fields.is_empty(), "{}.{} has no fields", b.name, r.name);
            let mut used = 0u64;
            for f in r.fields {
                let what = format!("{}.{}.{}", b.name, r.name, f.name);
                assert!((1..=32).contains(&f.width), "{what} width {}", f.width);
                assert!(
                    u32::from(f.lsb) + u32::from(f.width) <= 32,
                    "{what} beyond bit 31"
                );
                let bits = ((1u64 << f.width) - 1) << f.lsb;
                assert_eq!(used & bits, 0, "{what} overlaps another field");
                used |= bits;
                assert!(
                    u64::from(f.reset) < (1u64 << f.width),
                    "{what} reset {:#x} does not fit",
                    f.reset
                );
            }
            assert_eq!(u64::from(r.used_bits()), used);
            assert_eq!(r.reset() & !r.used_bits(), 0);
        }
    }
}

#[test]
fn names_are_unique_and_well_formed() {
    let mut blocks = BTreeSet::new();
    for b in MAP {
        assert!(is_lower_ident(b.name), "{}", b.name);
        assert!(blocks.insert(b.name), "block {} twice", b.name);
        assert!(!b.doc.trim().is_empty(), "{} undocumented", b.name);
        let mut regs = BTreeSet::new();
        for r in b.registers {
            assert!(is_lower_ident(r.name), "{}.{}", b.name, r.name);
            assert!(regs.insert(r.name), "{}.{} twice", b.name, r.name);
            assert!(
                !r.doc.trim().is_empty(),
                "{}.{} undocumented",
                b.name,
                r.name
            );
            let mut fields = BTreeSet::new();
            for f in r.fields {
                assert!(is_upper_ident(f.name), "{}.{}.{}", b.name, r.name, f.name);
                assert!(
                    fields.insert(f.name),
                    "{}.{}.{} twice",
                    b.name,
                    r.name,
                    f.name
                );
                assert!(
                    !f.doc.trim().is_empty(),
                    "{}.{}.{} undocumented",
                    b.name,
                    r.name,
                    f.name
                );
            }
        }
    }
    let mut enums = BTreeSet::new();
    for e in ENUMS {
        assert!(is_lower_ident(e.name), "{}", e.name);
        assert!(enums.insert(e.name), "enum {} twice", e.name);
        let mut names = BTreeSet::new();
        let mut values = BTreeSet::new();
        for v in e.values {
            assert!(
                v.name
                    .chars()
                    .all(|c| matches!(c, 'a'..='z' | '0'..='9' | '-')),
                "{}.{}",
                e.name,
                v.name
            );
            assert!(names.insert(v.name), "{}.{} twice", e.name, v.name);
            assert!(values.insert(v.value), "{} value {} twice", e.name, v.value);
            if e.flags {
                assert!(
                    v.value.is_power_of_two(),
                    "{}.{} is not one bit",
                    e.name,
                    v.name
                );
            }
        }
    }
}

#[test]
fn typed_accessors_agree_with_the_table() {
    // Window offsets from the generated modules equal base + offset from the data.
    assert_eq!(
        mbox::status::ADDR,
        mbox::BLOCK.base + mbox::BLOCK.register("status").unwrap().offset
    );
    assert_eq!(
        qp::timers::addr(3),
        qp::BASE + QP_CTX_OFFSET + 3 * QP_STRIDE + 0x18
    );
    assert_eq!(cfg::gid_w2::addr(1), 0x48 + 0x10);
    // Field get/set against plain shifts and masks.
    let f = qp::timers::RNR_RETRY;
    assert_eq!((f.lsb, f.width), (12, 3));
    let w = f.set(0xFFFF_FFFF, 0b101);
    assert_eq!(w, !(0b111 << 12) | (0b101 << 12));
    assert_eq!(f.get(w), 0b101);
    assert_eq!(f.set(0, 0xF), 0b111 << 12, "value beyond the width is cut");
    assert_eq!(qp::qkey::QKEY.max(), u32::MAX);
    assert_eq!(qp::qkey::QKEY.set(0x1234, 0xDEAD_BEEF), 0xDEAD_BEEF);
}

#[test]
fn every_qp_context_fits_and_is_one_stride() {
    let qp = qp::BLOCK;
    let ctx: Vec<&Register> = qp
        .registers
        .iter()
        .filter(|r| r.offset >= QP_CTX_OFFSET)
        .collect();
    assert!(ctx
        .iter()
        .all(|r| r.count == QP_COUNT && r.stride == QP_STRIDE));
    assert!(ctx
        .iter()
        .all(|r| r.offset + 4 <= QP_CTX_OFFSET + QP_STRIDE));
    // The largest table the block claims room for fits its address space.
    assert!(QP_CTX_OFFSET + QP_MAX * QP_STRIDE <= qp.size);
    assert_eq!(qp::qp_count::REG.reset(), QP_COUNT);
    assert!(u64::from(QP_MAX) <= 1u64 << QPN_BITS);
}

#[test]
fn value_enums_fit_their_fields() {
    let fits = |f: Field, v: u32| v <= f.max();
    assert!(QpState::ALL
        .iter()
        .all(|s| fits(qp::state::STATE, s.value()) && fits(mbox::qp_state::STATE, s.value())));
    assert!(QpType::ALL
        .iter()
        .all(|t| fits(qp::state::TYPE, t.value()) && fits(mbox::qp_type::TYPE, t.value())));
    assert!(ResultCode::ALL
        .iter()
        .all(|r| fits(mbox::status::RESULT, r.value())));
    assert!(Command::ALL.iter().all(|c| fits(mbox::cmd::OP, c.value())));
    let access: u32 = AccessFlag::ALL.iter().map(|a| a.value()).sum();
    assert_eq!(
        access,
        qp::access::FLAGS.max(),
        "access flags fill their field"
    );
    assert_eq!(access, mbox::access_flags::FLAGS.max());
    assert!(roce_wire::Pmtu::ALL
        .iter()
        .all(|p| fits(qp::path::PMTU, u32::from(p.code()))));
    assert_eq!(cfg::caps::GID_COUNT.reset, GID_COUNT);
    assert_eq!(1 << qp::path::SGID_INDEX.width, GID_COUNT);
    assert_eq!(1 << qp::path::PKEY_INDEX.width, PKEY_COUNT);
    assert!(MAX_RD_ATOMIC <= qp::rd_atomic::MAX_RD_ATOMIC.max());
    assert!(MAX_DEST_RD_ATOMIC <= qp::rd_atomic::MAX_DEST_RD_ATOMIC.max());
    assert_eq!(qp::sq_psn::PSN.max(), roce_wire::Psn::MASK);
    assert_eq!(
        mbox::timeout::TIMEOUT.max(),
        u32::from(roce_wire::LocalAckTimeout::MAX)
    );
    // Every supported mask bit is one bit and `SUPPORTED` is their union.
    assert_eq!(
        AttrMask::SUPPORTED.count_ones() as usize,
        AttrMask::ALL.len()
    );
}

#[test]
fn counters_cover_every_drop_reason_and_fit_the_block() {
    let names: Vec<&str> = Counter::ALL.iter().map(|c| c.name()).collect();
    for r in roce_wire::DropReason::ALL {
        let c = Counter::RxDrop(r);
        assert_eq!(Counter::from_index(c.index()), Some(c));
        assert_eq!(c.name(), r.name());
    }
    for want in [
        "not-roce",
        "truncated",
        "bad-icrc",
        "bad-ip-checksum",
        "ip-options",
        "unknown-opcode",
        "bad-padcnt",
        "bad-length",
        "bad-tver",
        "csr-unmapped",
    ] {
        assert!(names.contains(&want), "no counter {want}");
    }
    for (i, c) in Counter::ALL.iter().enumerate() {
        assert_eq!(c.index() as usize, i);
    }
    assert_eq!(Counter::from_index(Counter::COUNT), None);
    let reg = ctr::counter::REG;
    assert_eq!(reg.count, Counter::COUNT);
    assert_eq!(ctr::ctr_count::REG.reset(), Counter::COUNT);
    assert_eq!(Counter::DESC.values.len(), Counter::COUNT as usize);
}
