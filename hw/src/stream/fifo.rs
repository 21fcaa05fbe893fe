//! Small synchronous first-word-fall-through FIFO with a synchronous reset.
//!
//! rust-hdl's `SynchronousFIFO` has no reset (its pointers rely on initial
//! values) and forwards an incremented read address through a mux into a
//! registered RAM, which sets the clock on small FPGAs. This one keeps its
//! words in distributed RAM ([`LutRam`], asynchronous read) and moves the
//! head word into an output register whenever that register is free or
//! being emptied, so every path is short: a pointer register straight into
//! the RAM address, and the full / non-empty flags registered, decided from
//! an occupancy register's compares and the cycle's store and load.
//!
//! Capacity: `2^A + 1` words (the RAM plus the output register; one more,
//! a skid register, with [`SyncFifo::late_read`]). `AP1 =
//! A + 1` is the pointer width (checked in `new()`). A written word appears
//! at `data_out` two cycles later at the earliest. `write` when `full` and
//! `read` when `empty` are ignored.
//!
//! [`FifoLane`] is a FIFO's storage alone (the RAM and the output
//! register), driven by a [`SyncFifo`]'s `lane_*` outputs: words written and
//! popped in the same cycles as that FIFO's, in one pointer set. Several
//! queues that move together (a beat and its side fields) then keep one
//! set of pointers, occupancy and flags, so the pop's fan-out is one
//! control and the lanes' output-register enables, not one control per
//! queue.
//!
//! [`RamQueue`] holds the wide part of such a FIFO's words without an
//! output register or flags of its own: its head is the RAM's read at a
//! registered pointer, for a wide word whose pop is a late handshake (a pop
//! then moves a pointer, not a word-wide enable).

use crate::prim::LutRam;
use rust_hdl_core::prelude::*;
use rust_hdl_widgets::prelude::*;

#[derive(LogicBlock)]
pub struct SyncFifo<D: Synth, const A: usize, const AP1: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub write: Signal<In, Bit>,
    pub data_in: Signal<In, D>,
    pub full: Signal<Out, Bit>,
    pub read: Signal<In, Bit>,
    pub data_out: Signal<Out, D>,
    pub empty: Signal<Out, Bit>,
    /// The storage's controls, for companion [`FifoLane`]s: store
    /// `data_in` at `lane_waddr`; load the output register from
    /// `lane_raddr`.
    pub lane_store: Signal<Out, Bit>,
    pub lane_waddr: Signal<Out, Bits<A>>,
    pub lane_load: Signal<Out, Bit>,
    pub lane_raddr: Signal<Out, Bits<A>>,
    /// The skid register (with [`SyncFifo::late_read`]) samples the RAM's
    /// word at `lane_raddr`; the output register loads from the skid
    /// register instead of the RAM. Both low in a plain FIFO.
    pub lane_skid: Signal<Out, Bit>,
    pub lane_from_skid: Signal<Out, Bit>,
    /// Words in the RAM (0 to `2^A`; the output register not counted), from
    /// a flip-flop: a producer that keeps its own margin below `2^A` can
    /// decide from it a cycle ahead, without `full` in its handshake.
    pub ram_words: Signal<Out, Bits<AP1>>,
    lane: FifoLane<D, A>,
    wptr: DFF<Bits<AP1>>,
    rptr: DFF<Bits<AP1>>,
    out_valid: DFF<Bit>,
    /// The RAM is full / holds a word, as of this cycle (registered).
    full_q: DFF<Bit>,
    nonempty_q: DFF<Bit>,
    /// Words in the RAM (`wptr - rptr`), kept as its own register so the
    /// flags above are decided from compares on flip-flops and the cycle's
    /// store/load, with no pointer arithmetic in between.
    occ: DFF<Bits<AP1>>,
    /// With [`SyncFifo::late_read`]: the output stage's second word (a
    /// skid register, in the lanes) holds a word.
    skid_valid: DFF<Bit>,
    late: Constant<Bit>,
    ram_empty: Signal<Local, Bit>,
    store: Signal<Local, Bit>,
    load: Signal<Local, Bit>,
    // The flags' next values for either value of `read` (a consumer's
    // handshake usually arrives late), so `read` only picks between them.
    load0: Signal<Local, Bit>,
    load1: Signal<Local, Bit>,
    dm1: Signal<Local, Bit>,
    one: Signal<Local, Bit>,
    full0: Signal<Local, Bit>,
    full1: Signal<Local, Bit>,
    ne0: Signal<Local, Bit>,
    ne1: Signal<Local, Bit>,
    addr_mask: Constant<Bits<AP1>>,
    one_less: Constant<Bits<AP1>>,
}

impl<D: Synth, const A: usize, const AP1: usize> SyncFifo<D, A, AP1> {
    /// Words it holds: the RAM's `2^A` and the output register.
    pub const CAPACITY: usize = (1 << A) + 1;
    /// Words a [`SyncFifo::late_read`] one holds: one more, in its skid
    /// register.
    pub const LATE_CAPACITY: usize = Self::CAPACITY + 1;

    pub fn new() -> Self {
        assert!(
            (1..=8).contains(&A),
            "SyncFifo: address width {A} out of 1..=8"
        );
        assert_eq!(AP1, A + 1, "SyncFifo: AP1 must be A + 1");
        Self {
            clock: Default::default(),
            reset: Default::default(),
            write: Default::default(),
            data_in: Default::default(),
            full: Default::default(),
            read: Default::default(),
            data_out: Default::default(),
            empty: Default::default(),
            lane_store: Default::default(),
            lane_waddr: Default::default(),
            lane_load: Default::default(),
            lane_raddr: Default::default(),
            lane_skid: Default::default(),
            lane_from_skid: Default::default(),
            ram_words: Default::default(),
            lane: FifoLane::new(),
            wptr: Default::default(),
            rptr: Default::default(),
            out_valid: Default::default(),
            full_q: Default::default(),
            nonempty_q: Default::default(),
            occ: Default::default(),
            skid_valid: Default::default(),
            late: Constant::new(false),
            ram_empty: Default::default(),
            store: Default::default(),
            load: Default::default(),
            load0: Default::default(),
            load1: Default::default(),
            dm1: Default::default(),
            one: Default::default(),
            full0: Default::default(),
            full1: Default::default(),
            ne0: Default::default(),
            ne1: Default::default(),
            addr_mask: Constant::new(((1u64 << A) - 1).into()),
            one_less: Constant::new(((1u64 << A) - 1).into()),
        }
    }

    /// This FIFO for a consumer whose `read` arrives late in the cycle:
    /// the output stage is two words deep (the output register and a skid
    /// register behind it, in every lane), and the RAM's head moves into
    /// it whenever the skid register is free. The RAM's load, pointers,
    /// count and flags then wait on flip-flops alone, and `read` reaches
    /// only the output stage (its register's enable and two valid bits).
    /// It holds [`SyncFifo::LATE_CAPACITY`] words. For the same writes and
    /// reads, `data_out` and `empty` are a plain FIFO's in every cycle;
    /// `full` and `ram_words` count the RAM alone, which a word leaves for
    /// the skid register while the output register is not read.
    pub fn late_read(mut self) -> Self {
        self.late = Constant::new(true);
        self
    }
}

impl<D: Synth, const A: usize, const AP1: usize> Default for SyncFifo<D, A, AP1> {
    fn default() -> Self {
        Self::new()
    }
}

impl<D: Synth, const A: usize, const AP1: usize> Logic for SyncFifo<D, A, AP1> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, wptr, rptr, out_valid, skid_valid, full_q, nonempty_q, occ);
        clock!(self, clock, lane);
        // RAM full / empty, from flip-flops (set from the next pointers below).
        self.full.next = self.full_q.q.val();
        self.ram_words.next = self.occ.q.val();
        self.ram_empty.next = !self.nonempty_q.q.val();
        // Write side.
        self.store.next = self.write.val() & !self.full.val();
        self.lane_store.next = self.store.val();
        self.lane_waddr.next = bit_cast::<A, AP1>(self.wptr.q.val() & self.addr_mask.val());
        if self.store.val() {
            self.wptr.d.next = self.wptr.q.val() + 1;
        }
        // Read side. The RAM's head moves into the output stage (`load`):
        // plain, when the output register is free or being read; with
        // `late_read`, whenever the skid register is free, so the load
        // waits on flip-flops alone and `read` only moves the stage's words.
        // `load0` / `load1` are the load for `read` low / high.
        self.lane_raddr.next = bit_cast::<A, AP1>(self.rptr.q.val() & self.addr_mask.val());
        if self.late.val() {
            self.load0.next = !self.ram_empty.val() & !self.skid_valid.q.val();
            self.load1.next = self.load0.val();
        } else {
            self.load0.next = !self.ram_empty.val() & !self.out_valid.q.val();
            self.load1.next = !self.ram_empty.val();
        }
        if self.read.val() {
            self.load.next = self.load1.val();
        } else {
            self.load.next = self.load0.val();
        }
        if self.load.val() {
            self.rptr.d.next = self.rptr.q.val() + 1;
        }
        if self.late.val() {
            // The output register takes the skid's word, else the RAM's,
            // whenever it is free or read; the skid register samples the
            // RAM's head whenever it is free and keeps it while the output
            // register holds a word that is not read.
            self.lane_load.next = !self.out_valid.q.val() | self.read.val();
            self.lane_skid.next = !self.skid_valid.q.val();
            self.lane_from_skid.next = self.skid_valid.q.val();
            if self.lane_load.val() {
                self.out_valid.d.next = self.skid_valid.q.val() | self.load.val();
            }
            self.skid_valid.d.next = self.out_valid.q.val()
                & !self.read.val()
                & (self.skid_valid.q.val() | self.load.val());
        } else {
            self.lane_load.next = self.load.val();
            self.lane_skid.next = false;
            self.lane_from_skid.next = false;
            if self.load.val() {
                self.out_valid.d.next = true;
            } else if self.read.val() {
                self.out_valid.d.next = false;
            }
            self.skid_valid.d.next = false;
        }
        self.lane.store.next = self.lane_store.val();
        self.lane.waddr.next = self.lane_waddr.val();
        self.lane.data_in.next = self.data_in.val();
        self.lane.load.next = self.lane_load.val();
        self.lane.raddr.next = self.lane_raddr.val();
        self.lane.skid.next = self.lane_skid.val();
        self.lane.from_skid.next = self.lane_from_skid.val();
        self.data_out.next = self.lane.data_out.val();
        self.empty.next = !self.out_valid.q.val();
        // The RAM's occupancy and flags move by one word at most. The flags
        // are decided for `read` low (`load0`) and high (`load1`), then
        // picked by `read`.
        if self.store.val() & !self.load.val() {
            self.occ.d.next = self.occ.q.val() + 1;
        } else if self.load.val() & !self.store.val() {
            self.occ.d.next = self.occ.q.val() - 1;
        }
        self.dm1.next = self.occ.q.val() == self.one_less.val();
        self.one.next = self.occ.q.val() == 1;
        self.full0.next = (self.store.val() & !self.load0.val() & self.dm1.val())
            | (self.full_q.q.val() & !(self.load0.val() & !self.store.val()));
        self.full1.next = (self.store.val() & !self.load1.val() & self.dm1.val())
            | (self.full_q.q.val() & !(self.load1.val() & !self.store.val()));
        self.ne0.next = (self.store.val() & !self.load0.val())
            | (self.nonempty_q.q.val() & !(self.load0.val() & !self.store.val() & self.one.val()));
        self.ne1.next = (self.store.val() & !self.load1.val())
            | (self.nonempty_q.q.val() & !(self.load1.val() & !self.store.val() & self.one.val()));
        if self.read.val() {
            self.full_q.d.next = self.full1.val();
            self.nonempty_q.d.next = self.ne1.val();
        } else {
            self.full_q.d.next = self.full0.val();
            self.nonempty_q.d.next = self.ne0.val();
        }
        if self.reset.val() {
            self.wptr.d.next = 0.into();
            self.rptr.d.next = 0.into();
            self.out_valid.d.next = false;
            self.skid_valid.d.next = false;
            self.occ.d.next = 0.into();
            self.full_q.d.next = false;
            self.nonempty_q.d.next = false;
        }
    }
}

/// A [`SyncFifo`]'s storage: `2^A` words of LUT RAM and the output
/// register, driven by that FIFO's `lane_*` outputs (its own storage is one
/// of these). A companion lane's `data_in` is stored in the cycles the
/// FIFO stores its own word, and its `data_out` is the word that moves with
/// the FIFO's `data_out`.
#[derive(LogicBlock)]
pub struct FifoLane<D: Synth, const A: usize> {
    pub clock: Signal<In, Clock>,
    pub store: Signal<In, Bit>,
    pub waddr: Signal<In, Bits<A>>,
    pub data_in: Signal<In, D>,
    pub load: Signal<In, Bit>,
    pub raddr: Signal<In, Bits<A>>,
    /// The skid register samples the RAM's word at `raddr`.
    pub skid: Signal<In, Bit>,
    /// `load` takes the skid register's word, not the RAM's.
    pub from_skid: Signal<In, Bit>,
    pub data_out: Signal<Out, D>,
    ram: LutRam<D, A>,
    out_data: DFF<D>,
    skid_data: DFF<D>,
}

impl<D: Synth, const A: usize> FifoLane<D, A> {
    pub fn new() -> Self {
        Self {
            clock: Default::default(),
            store: Default::default(),
            waddr: Default::default(),
            data_in: Default::default(),
            load: Default::default(),
            raddr: Default::default(),
            skid: Default::default(),
            from_skid: Default::default(),
            data_out: Default::default(),
            ram: LutRam::new(),
            out_data: Default::default(),
            skid_data: Default::default(),
        }
    }
}

impl<D: Synth, const A: usize> Default for FifoLane<D, A> {
    fn default() -> Self {
        Self::new()
    }
}

impl<D: Synth, const A: usize> Logic for FifoLane<D, A> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, out_data, skid_data);
        clock!(self, clock, ram);
        self.ram.write_enable.next = self.store.val();
        self.ram.write_address.next = self.waddr.val();
        self.ram.write_data.next = self.data_in.val();
        self.ram.read_address.next = self.raddr.val();
        if self.skid.val() {
            self.skid_data.d.next = self.ram.read_data.val();
        }
        if self.load.val() {
            if self.from_skid.val() {
                self.out_data.d.next = self.skid_data.q.val();
            } else {
                self.out_data.d.next = self.ram.read_data.val();
            }
        }
        self.data_out.next = self.out_data.q.val();
    }
}

/// A queue of `2^A` words in LUT RAM with no flags of its own, for the
/// wide part of a word whose narrow part is queued in a flagged FIFO (a
/// [`SyncFifo`]) written and popped in the same cycles: the caller writes
/// only while that FIFO has room and reads only while it holds a word.
/// `data_out` is the RAM's read at the registered read pointer, so a pop
/// moves only that pointer, never a word-wide clock enable: for a wide word
/// whose pop is a late handshake (a join of several queues), that keeps the
/// handshake's fan-out to a few flip-flops. The read path (pointer → LUT
/// RAM → the consumer) is in the consumer's cycle.
///
/// The write is registered (enable, address, word), so the RAM's write
/// enables are a flip-flop and the bank decode. A word written at one edge
/// is at `data_out` from the edge after, when it is the oldest: no later
/// than the companion [`SyncFifo`] shows it.
#[derive(LogicBlock)]
pub struct RamQueue<D: Synth, const A: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub write: Signal<In, Bit>,
    pub data_in: Signal<In, D>,
    pub read: Signal<In, Bit>,
    pub data_out: Signal<Out, D>,
    ram: LutRam<D, A>,
    wptr: DFF<Bits<A>>,
    rptr: DFF<Bits<A>>,
    w_en: DFF<Bit>,
    w_addr: DFF<Bits<A>>,
    w_data: DFF<D>,
}

impl<D: Synth, const A: usize> RamQueue<D, A> {
    pub fn new() -> Self {
        assert!(
            (1..=8).contains(&A),
            "RamQueue: address width {A} out of 1..=8"
        );
        Self {
            clock: Default::default(),
            reset: Default::default(),
            write: Default::default(),
            data_in: Default::default(),
            read: Default::default(),
            data_out: Default::default(),
            ram: LutRam::new(),
            wptr: Default::default(),
            rptr: Default::default(),
            w_en: Default::default(),
            w_addr: Default::default(),
            w_data: Default::default(),
        }
    }
}

impl<D: Synth, const A: usize> Default for RamQueue<D, A> {
    fn default() -> Self {
        Self::new()
    }
}

impl<D: Synth, const A: usize> Logic for RamQueue<D, A> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, wptr, rptr, w_en, w_addr, w_data);
        clock!(self, clock, ram);
        self.w_en.d.next = self.write.val();
        self.w_addr.d.next = self.wptr.q.val();
        self.w_data.d.next = self.data_in.val();
        if self.write.val() {
            self.wptr.d.next = self.wptr.q.val() + 1;
        }
        self.ram.write_enable.next = self.w_en.q.val();
        self.ram.write_address.next = self.w_addr.q.val();
        self.ram.write_data.next = self.w_data.q.val();
        self.ram.read_address.next = self.rptr.q.val();
        self.data_out.next = self.ram.read_data.val();
        if self.read.val() {
            self.rptr.d.next = self.rptr.q.val() + 1;
        }
        if self.reset.val() {
            self.wptr.d.next = 0.into();
            self.rptr.d.next = 0.into();
            self.w_en.d.next = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sync_fifo_synthesizes() {
        let mut uut = SyncFifo::<Bits<33>, 5, 6>::new();
        uut.connect_all();
        yosys_validate("sync_fifo", &generate_verilog(&uut)).unwrap();
    }

    /// Capacity 2^2 + 1 = 5 words: a 4-word RAM and the output register
    /// (6 with `late_read`'s skid register). Random writes and reads
    /// (phases that fill it, drain it, and hold it steady) against the
    /// module's documented behaviour, cycle by cycle: a word stored at one
    /// edge can move to the output stage at the next, when the output
    /// register is free or being read (plain) or the skid register is free
    /// (`late`); `full` is the RAM holding 4 words, `ram_words` the words
    /// it holds, `empty` is the output register holding none. With `reset`
    /// false the FIFO starts from its flip-flops' power-up values instead
    /// of the reset's.
    fn sync_fifo_matches_a_queue(uut: SyncFifo<Bits<8>, 2, 3>, late: bool, reset: bool) {
        type F = SyncFifo<Bits<8>, 2, 3>;
        let mut sim = Simulation::new();
        sim.add_clock(5, |x: &mut Box<F>| x.clock.next = !x.clock.val());
        sim.add_testbench(move |mut sim: Sim<F>| {
            let mut x = sim.init()?;
            let mut ram = std::collections::VecDeque::<u64>::new();
            // The output stage: the output register's word first, then the
            // skid register's.
            let mut stage = std::collections::VecDeque::<u64>::new();
            let mut rng = 0x9e37_79b9_7f4a_7c15u64;
            let (mut next, mut fulls, mut skids, mut reads) = (0u64, 0, 0, 0);
            x.reset.next = reset;
            wait_clock_cycle!(sim, clock, x);
            x.reset.next = false;
            for cycle in 0..4000u64 {
                let (write, read) = crate::testing::phased_handshake(&mut rng, cycle, 4);
                sim_assert_eq!(sim, x.empty.val(), stage.is_empty(), x);
                sim_assert_eq!(sim, x.full.val(), ram.len() == 4, x);
                sim_assert_eq!(sim, x.ram_words.val().index(), ram.len(), x);
                if let Some(&w) = stage.front() {
                    sim_assert_eq!(sim, x.data_out.val().index() as u64, w, x);
                }
                x.write.next = write;
                x.data_in.next = next.into();
                x.read.next = read;
                wait_clock_cycle!(sim, clock, x);
                let store = write && ram.len() < 4;
                let taken = read && !stage.is_empty();
                let load = !ram.is_empty()
                    && if late {
                        stage.len() < 2
                    } else {
                        stage.is_empty() || read
                    };
                if taken {
                    stage.pop_front();
                }
                if load {
                    stage.extend(ram.pop_front());
                }
                if store {
                    ram.push_back(next);
                    next = (next + 1) & 0xff;
                }
                fulls += (ram.len() == 4) as u32;
                skids += (stage.len() == 2) as u32;
                reads += taken as u32;
            }
            sim_assert!(sim, fulls > 50 && reads > 1000, x);
            sim_assert!(sim, !late || skids > 50, x);
            sim.done(x)
        });
        sim.run(Box::new(uut), 200_000).unwrap();
    }

    #[test]
    fn sync_fifo_follows_a_queue() {
        sync_fifo_matches_a_queue(SyncFifo::new(), false, true);
    }

    #[test]
    fn late_read_fifo_follows_a_queue() {
        sync_fifo_matches_a_queue(SyncFifo::new().late_read(), true, true);
        // The skid register powers up empty (no reset).
        sync_fifo_matches_a_queue(SyncFifo::new().late_read(), true, false);
    }

    #[test]
    fn late_read_fifo_synthesizes() {
        let mut uut = SyncFifo::<Bits<33>, 5, 6>::new().late_read();
        uut.connect_all();
        yosys_validate("sync_fifo_late", &generate_verilog(&uut)).unwrap();
    }

    /// A [`SyncFifo`] with one companion [`FifoLane`], for the test below.
    #[derive(LogicBlock)]
    struct LanePair {
        clock: Signal<In, Clock>,
        reset: Signal<In, Bit>,
        write: Signal<In, Bit>,
        data_in: Signal<In, Bits<8>>,
        side_in: Signal<In, Bits<8>>,
        read: Signal<In, Bit>,
        data_out: Signal<Out, Bits<8>>,
        side_out: Signal<Out, Bits<8>>,
        empty: Signal<Out, Bit>,
        full: Signal<Out, Bit>,
        fifo: SyncFifo<Bits<8>, 2, 3>,
        lane: FifoLane<Bits<8>, 2>,
    }

    impl Logic for LanePair {
        #[hdl_gen]
        fn update(&mut self) {
            clock!(self, clock, fifo, lane);
            self.fifo.reset.next = self.reset.val();
            self.fifo.write.next = self.write.val();
            self.fifo.data_in.next = self.data_in.val();
            self.fifo.read.next = self.read.val();
            self.lane.store.next = self.fifo.lane_store.val();
            self.lane.waddr.next = self.fifo.lane_waddr.val();
            self.lane.load.next = self.fifo.lane_load.val();
            self.lane.raddr.next = self.fifo.lane_raddr.val();
            self.lane.skid.next = self.fifo.lane_skid.val();
            self.lane.from_skid.next = self.fifo.lane_from_skid.val();
            self.lane.data_in.next = self.side_in.val();
            self.data_out.next = self.fifo.data_out.val();
            self.side_out.next = self.lane.data_out.val();
            self.empty.next = self.fifo.empty.val();
            self.full.next = self.fifo.full.val();
        }
    }

    #[test]
    fn fifo_lane_moves_with_its_fifo() {
        lane_moves_with(SyncFifo::new());
        lane_moves_with(SyncFifo::new().late_read());
    }

    fn lane_moves_with(fifo: SyncFifo<Bits<8>, 2, 3>) {
        // The lane is written with a word derived from the FIFO's (its
        // complement, rotated), offered in every cycle whether or not the
        // FIFO stores: while the FIFO shows a word, the lane must show that
        // word's companion, through fills, drains and a full RAM.
        let side = |w: u64| (!w).rotate_left(3) & 0xff;
        let mut sim = Simulation::new();
        sim.add_clock(5, |x: &mut Box<LanePair>| x.clock.next = !x.clock.val());
        sim.add_testbench(move |mut sim: Sim<LanePair>| {
            let mut x = sim.init()?;
            let mut rng = 0x5851_f42d_4c95_7f2du64;
            let (mut next, mut checked, mut fulls) = (0u64, 0, 0);
            x.reset.next = true;
            wait_clock_cycle!(sim, clock, x);
            x.reset.next = false;
            for cycle in 0..4000u64 {
                let (write, read) = crate::testing::phased_handshake(&mut rng, cycle, 4);
                if !x.empty.val() {
                    let w = x.data_out.val().index() as u64;
                    sim_assert_eq!(sim, x.side_out.val().index() as u64, side(w), x);
                    checked += 1;
                }
                fulls += x.full.val() as u32;
                let stored = write && !x.full.val();
                x.write.next = write;
                x.data_in.next = next.into();
                x.side_in.next = side(next).into();
                x.read.next = read;
                wait_clock_cycle!(sim, clock, x);
                if stored {
                    next = (next + 1) & 0xff;
                }
            }
            sim_assert!(sim, checked > 2000 && fulls > 50, x);
            sim.done(x)
        });
        let mut uut = LanePair {
            clock: Default::default(),
            reset: Default::default(),
            write: Default::default(),
            data_in: Default::default(),
            side_in: Default::default(),
            read: Default::default(),
            data_out: Default::default(),
            side_out: Default::default(),
            empty: Default::default(),
            full: Default::default(),
            fifo,
            lane: FifoLane::new(),
        };
        uut.connect_all();
        yosys_validate("fifo_lane_pair", &generate_verilog(&uut)).unwrap();
        sim.run(Box::new(uut), 200_000).unwrap();
    }

    #[test]
    fn ram_queue_synthesizes() {
        let mut uut = RamQueue::<Bits<33>, 5>::new();
        uut.connect_all();
        yosys_validate("ram_queue", &generate_verilog(&uut)).unwrap();
    }

    #[test]
    fn ram_queue_follows_its_fifo() {
        // A RamQueue beside a 4-word model FIFO, written and read only as
        // that FIFO allows (the contract): the head of the model is at
        // `data_out` from the second edge after its write on.
        type F = RamQueue<Bits<8>, 2>;
        let mut sim = Simulation::new();
        sim.add_clock(5, |x: &mut Box<F>| x.clock.next = !x.clock.val());
        sim.add_testbench(move |mut sim: Sim<F>| {
            let mut x = sim.init()?;
            // (word, edges since its write)
            let mut q = std::collections::VecDeque::<(u64, u32)>::new();
            let mut rng = 0x2545_f491_4f6c_dd1du64;
            let (mut next, mut checked, mut reads) = (0u64, 0, 0);
            x.reset.next = true;
            wait_clock_cycle!(sim, clock, x);
            x.reset.next = false;
            for cycle in 0..4000u64 {
                let (offer, take) = crate::testing::phased_handshake(&mut rng, cycle, 4);
                let write = offer && q.len() < 4;
                // The companion FIFO shows a word two edges after its write.
                let read = take && q.front().is_some_and(|&(_, age)| age >= 2);
                if let Some(&(w, age)) = q.front() {
                    if age >= 2 {
                        sim_assert_eq!(sim, x.data_out.val().index() as u64, w, x);
                        checked += 1;
                    }
                }
                x.write.next = write;
                x.data_in.next = next.into();
                x.read.next = read;
                wait_clock_cycle!(sim, clock, x);
                if read {
                    q.pop_front();
                    reads += 1;
                }
                for e in q.iter_mut() {
                    e.1 += 1;
                }
                if write {
                    q.push_back((next, 1));
                    next = (next + 1) & 0xff;
                }
            }
            sim_assert!(sim, checked > 2000 && reads > 1000, x);
            sim.done(x)
        });
        sim.run(Box::new(F::new()), 200_000).unwrap();
    }
}
