//! The Verilator bridge itself: wide ports round-trip bit-exactly, models
//! run in parallel threads, traces are written on demand.

use roce_sim::axis::le_words;
use roce_sim::bfm::{PacketSink, PacketSource};
use roce_sim::model::Model;
use roce_sim::models::{AxisRegisterW512, AxisRegisterW64, Crc32W64};
use roce_sim::rng::Rng;
use roce_sim::stream_cycle;

/// Every bit of a 512-bit input port reaches the 512-bit output port of the
/// register slice unchanged (and the 64-bit keep with it), one cycle later.
#[test]
fn port_512_bits_round_trip() {
    let mut rng = Rng::new(512);
    let mut dut = AxisRegisterW512::new();
    dut.set_m_axis_tready(true);
    let mut previous: Option<([u32; 16], u64)> = None;
    for i in 0..2000 {
        // Walking ones first (each bit alone), then random words.
        let data: [u32; 16] = if i < 512 {
            let mut w = [0u32; 16];
            w[i / 32] = 1 << (i % 32);
            w
        } else {
            std::array::from_fn(|_| rng.next_u32())
        };
        let keep = if i < 64 { 1u64 << i } else { rng.next_u64() };
        dut.set_s_axis_tdata(&data);
        dut.set_s_axis_tkeep(keep);
        dut.set_s_axis_tvalid(true);
        dut.eval();
        assert!(dut.get_s_axis_tready());
        assert_eq!(dut.get_s_axis_tdata(), data, "input port read back");
        if let Some((d, k)) = previous {
            assert!(dut.get_m_axis_tvalid());
            assert_eq!(dut.get_m_axis_tdata(), d, "beat {}", i - 1);
            assert_eq!(dut.get_m_axis_tkeep(), k, "beat {}", i - 1);
        }
        previous = Some((data, keep));
        dut.tick();
    }
    assert_eq!(dut.cycles(), 2000);
}

/// Each setter writes only its own port, at its own width: setting the
/// 8-bit `tkeep` from a 32-bit value keeps 8 bits and leaves the ports
/// stored next to it alone (a wrong storage width would overwrite them).
#[test]
fn setters_write_only_their_port() {
    let mut dut = AxisRegisterW64::new();
    dut.set_s_axis_tdata(0x0123_4567_89AB_CDEF);
    dut.set_s_axis_tlast(true);
    dut.set_s_axis_tuser(false);
    dut.set_s_axis_tvalid(true);
    dut.set_m_axis_tready(true);
    dut.set_reset(false);
    dut.set_s_axis_tkeep(0xABCD_EF5A);
    dut.eval();
    assert_eq!(dut.get_s_axis_tkeep(), 0x5A);
    assert_eq!(dut.get_s_axis_tdata(), 0x0123_4567_89AB_CDEF);
    assert!(dut.get_s_axis_tlast() && !dut.get_s_axis_tuser() && dut.get_s_axis_tvalid());
    assert!(dut.get_m_axis_tready() && !dut.get_reset());
    dut.tick();
    assert_eq!(dut.get_m_axis_tkeep(), 0x5A);
    assert!(dut.get_m_axis_tlast());
}

/// Packets through the register slice under random idle and backpressure
/// arrive whole, in order, with the stream rules kept (both widths).
#[test]
fn register_slice_keeps_packets_under_backpressure() {
    fn check<F: FnMut(&mut PacketSource, &mut PacketSink)>(lanes: usize, mut step: F) {
        let seed = Rng::seed_from_env("register_slice", 0x5ce);
        let mut rng = Rng::new(seed);
        let mut src = PacketSource::new(lanes, seed, 300);
        let mut sink = PacketSink::new(lanes, seed + 1, 300);
        let packets: Vec<Vec<u8>> = (0..300)
            .map(|_| {
                let len = rng.range(1, 6 * lanes);
                rng.bytes(len)
            })
            .collect();
        for (i, p) in packets.iter().enumerate() {
            src.push_with_user(p, i % 7 == 0);
        }
        let mut cycles = 0;
        while sink.packets.len() < packets.len() {
            step(&mut src, &mut sink);
            cycles += 1;
            assert!(
                cycles < 100_000,
                "stuck after {} packets",
                sink.packets.len()
            );
        }
        assert_eq!(sink.violations, Vec::<String>::new());
        for (i, (got, want)) in sink.packets.iter().zip(&packets).enumerate() {
            assert_eq!(&got.data, want, "packet {i}");
            assert_eq!(got.user, i % 7 == 0, "packet {i} tuser");
        }
    }
    let mut narrow = AxisRegisterW64::new();
    check(8, |src, sink| {
        stream_cycle!(narrow, src => s_axis, sink => m_axis);
    });
    let mut wide = AxisRegisterW512::new();
    check(64, |src, sink| {
        stream_cycle!(wide, src => s_axis, sink => m_axis);
    });
}

/// Two models, each in its own thread with its own VerilatedContext, run
/// at once and both compute right.
#[test]
fn two_models_in_two_threads() {
    let crc = std::thread::spawn(|| {
        let mut dut = Crc32W64::new();
        let mut src = PacketSource::new(8, 1, 100);
        let mut sink = PacketSink::new(4, 2, 100);
        let data: Vec<u8> = (0..1000u32).map(|i| (i * 7 + 3) as u8).collect();
        for _ in 0..50 {
            src.push(&data);
        }
        dut.set_s_init(0xFFFF_FFFF);
        while sink.packets.len() < 50 {
            stream_cycle!(dut, src => s_axis, sink => m_crc);
        }
        let want = crc::Crc::<u32>::new(&crc::CRC_32_ISO_HDLC).checksum(&data);
        sink.packets
            .iter()
            .all(|p| u32::from_le_bytes(p.data.as_slice().try_into().unwrap()) == want)
    });
    let wide = std::thread::spawn(|| {
        let mut dut = AxisRegisterW512::new();
        let mut rng = Rng::new(9);
        dut.set_m_axis_tready(true);
        dut.set_s_axis_tvalid(true);
        let mut prev = None;
        let mut ok = true;
        for _ in 0..20_000 {
            let bytes = rng.bytes(64);
            let words: [u32; 16] = le_words(&bytes);
            dut.set_s_axis_tdata(&words);
            dut.eval();
            if let Some(p) = prev {
                ok &= dut.get_m_axis_tdata() == p;
            }
            prev = Some(words);
            dut.tick();
        }
        ok
    });
    assert!(crc.join().unwrap(), "CRC model in thread 1");
    assert!(wide.join().unwrap(), "register model in thread 2");
}

/// `trace_to` writes a VCD with the model's signals and every cycle.
#[test]
fn trace_file_written() {
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("bridge_trace.vcd");
    let _ = std::fs::remove_file(&path);
    {
        let mut dut = AxisRegisterW64::new();
        dut.trace_to(&path).unwrap();
        assert!(
            dut.trace_to(&path).is_err(),
            "a second trace on one model is refused"
        );
        dut.set_m_axis_tready(true);
        for i in 0..100u64 {
            dut.set_s_axis_tvalid(true);
            dut.set_s_axis_tdata(i.wrapping_mul(0x0101_0101_0101_0101));
            dut.tick();
        }
    }
    let vcd = std::fs::read_to_string(&path).unwrap();
    assert!(vcd.contains("$enddefinitions"), "VCD header");
    assert!(vcd.contains("tdata"), "port names in the trace");
    // Two dumps per cycle after the initial one.
    assert!(vcd.contains("\n#200\n"), "every half cycle dumped");
}
