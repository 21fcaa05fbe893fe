//! Per-QP transport timers without a counter per QP (issue 35: local ACK
//! timeout and RNR wait for every QP).
//!
//! Each timer (an *entry*: the transport numbers them `qpn * 2 + kind`, or
//! however it likes, below `2^E`) is a deadline in block RAM: a 32-bit tick
//! count and a valid bit. A free-running tick counter (`now`) advances every
//! `tick_cycles` clock cycles; a scanner reads `L` entries per cycle, one
//! from each of `L` banks (entry `e` lives in bank `e mod L` at address
//! `e / L`), so it passes every entry once in `2^A = 2^E / L` cycles, and
//! reports each armed entry whose deadline has come (`now - deadline`, as a
//! signed 32-bit number, not negative) on `m_exp` once, disarming it.
//!
//! Resolution: an entry that expires is seen at most one scan after its
//! deadline tick, so the error is below one tick plus one scan. With
//! `2^A ≤ tick_cycles` and `tick_cycles` cycles per tick, both are at most
//! `tick_cycles` cycles: the default build (2048 entries: 1024 QPs × 2
//! timers, 16 banks of 128) at a 128-cycle tick is 0.82 µs at 156.25 MHz
//! (DESIGN §8's timers, issue 35's goal ≤ 1 µs). A burst of expiries makes
//! the scanner hold on their word for one cycle per expiry beyond the first
//! (they leave one per cycle), so a scan takes `2^A` cycles plus those.
//!
//! Arming: `s_arm_entry`, `s_arm_delay` (ticks from now, below `2^31`;
//! larger is clamped to `2^31 - 1`), `s_arm_disarm` (clear instead). One
//! per cycle, always taken after the reset's clearing pass (`busy`): an arm
//! writes its bank's RAM at once, and a scanned word that an arm has
//! written since it was read never reports that entry (the arm wins: its
//! new deadline or disarm supersedes what was read). An expiry waits when
//! an arm writes the same bank in that cycle (the bank has one write port)
//! or the expiry queue is full, and leaves in a later cycle.
//!
//! Ports (`s_*` in, `m_*` out): `s_arm_valid/ready`, `s_arm_entry[E]`,
//! `s_arm_delay[32]`, `s_arm_disarm`; `m_exp_valid/ready`,
//! `m_exp_entry[E]` (a queue of [`EXP_QUEUE`] + 1 entries); `now[32]`;
//! `busy` (the clearing pass after reset, `2^A` cycles); `cnt_armed`,
//! `cnt_expired` (32-bit, wrapping).

use crate::bram::Bram;
use crate::fifo::SyncFifo;
use rust_hdl_core::prelude::*;
use rust_hdl_widgets::prelude::*;

/// Bits of a deadline (ticks).
pub const DEADLINE_BITS: usize = 32;
/// A RAM word: the deadline and, above it, the valid bit.
type Word = Bits<33>;
/// Address bits of the expiry queue (2^4 words in its RAM).
const EXP_A: usize = 4;
/// Entries the expiry queue holds besides its output register.
pub const EXP_QUEUE: usize = 1 << EXP_A;

/// `2^E` timer entries in `L = 2^LB` banks of `2^A` (`E = A + LB`).
#[derive(LogicBlock)]
pub struct QpTimers<const E: usize, const A: usize, const LB: usize, const L: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    pub s_arm_valid: Signal<In, Bit>,
    pub s_arm_ready: Signal<Out, Bit>,
    pub s_arm_entry: Signal<In, Bits<E>>,
    pub s_arm_delay: Signal<In, Bits<32>>,
    pub s_arm_disarm: Signal<In, Bit>,
    pub m_exp_valid: Signal<Out, Bit>,
    pub m_exp_ready: Signal<In, Bit>,
    pub m_exp_entry: Signal<Out, Bits<E>>,
    pub now: Signal<Out, Bits<32>>,
    pub busy: Signal<Out, Bit>,
    pub cnt_armed: Signal<Out, Bits<32>>,
    pub cnt_expired: Signal<Out, Bits<32>>,
    banks: Vec<Bram<Word, A>>,
    exp: SyncFifo<Bits<E>, EXP_A, 5>,
    // Time.
    now_q: DFF<Bits<32>>,
    tdiv: DFF<Bits<16>>,
    // The clearing pass after reset.
    init: DFF<Bit>,
    // Scanner: next address to read; the word at the RAM outputs (its
    // address, whether it waits to be evaluated, the lanes written since it
    // was read); the lanes of the evaluated word still to report.
    scan_a: DFF<Bits<A>>,
    out_valid: DFF<Bit>,
    out_a: DFF<Bits<A>>,
    wsr: DFF<Bits<L>>,
    pend: DFF<Bits<L>>,
    pend_a: DFF<Bits<A>>,
    armed: DFF<Bits<32>>,
    expired: DFF<Bits<32>>,
    // Per cycle.
    arm_fire: Signal<Local, Bit>,
    arm_lane: Signal<Local, Bits<LB>>,
    arm_addr: Signal<Local, Bits<A>>,
    arm_hit: Signal<Local, Bits<L>>,
    arm_word: Signal<Local, Word>,
    delay: Signal<Local, Bits<32>>,
    hit_out: Signal<Local, Bits<L>>,
    hit_pend: Signal<Local, Bits<L>>,
    hit_scan: Signal<Local, Bits<L>>,
    cand: Signal<Local, Bits<L>>,
    /// Per lane: `now` minus the lane's deadline (negative: not yet due).
    age: Vec<Signal<Local, Bits<32>>>,
    eval: Signal<Local, Bit>,
    issue: Signal<Local, Bit>,
    free: Signal<Local, Bits<L>>,
    pick: Signal<Local, Bits<L>>,
    emit: Signal<Local, Bit>,
    entry: Signal<Local, Bits<E>>,
    c_lane: Vec<Constant<Bits<LB>>>,
    c_lane_e: Vec<Constant<Bits<E>>>,
    c_tick: Constant<Bits<16>>,
    c_a_last: Constant<Bits<A>>,
    c_shift: Constant<Bits<8>>,
}

impl<const E: usize, const A: usize, const LB: usize, const L: usize> QpTimers<E, A, LB, L> {
    /// Timers with a tick of `tick_cycles` clock cycles (at least `2^A`,
    /// the length of a scan, so every entry is seen once per tick).
    pub fn new(tick_cycles: u16) -> Self {
        assert_eq!(E, A + LB, "QpTimers: E must be A + LB");
        assert_eq!(L, 1 << LB, "QpTimers: L must be 2^LB");
        assert!((2..=12).contains(&A), "QpTimers: A={A} out of 2..=12");
        assert!(
            (1..=5).contains(&LB),
            "QpTimers: LB={LB} out of 1..=5 (2 to 32 banks)"
        );
        assert!(
            u32::from(tick_cycles) >= 1 << A,
            "QpTimers: a tick of {tick_cycles} cycles is shorter than a scan (2^{A})"
        );
        Self {
            clock: Default::default(),
            reset: Default::default(),
            s_arm_valid: Default::default(),
            s_arm_ready: Default::default(),
            s_arm_entry: Default::default(),
            s_arm_delay: Default::default(),
            s_arm_disarm: Default::default(),
            m_exp_valid: Default::default(),
            m_exp_ready: Default::default(),
            m_exp_entry: Default::default(),
            now: Default::default(),
            busy: Default::default(),
            cnt_armed: Default::default(),
            cnt_expired: Default::default(),
            banks: (0..L).map(|_| Bram::new()).collect(),
            exp: SyncFifo::new(),
            now_q: Default::default(),
            tdiv: Default::default(),
            init: Default::default(),
            scan_a: Default::default(),
            out_valid: Default::default(),
            out_a: Default::default(),
            wsr: Default::default(),
            pend: Default::default(),
            pend_a: Default::default(),
            armed: Default::default(),
            expired: Default::default(),
            arm_fire: Default::default(),
            arm_lane: Default::default(),
            arm_addr: Default::default(),
            arm_hit: Default::default(),
            arm_word: Default::default(),
            delay: Default::default(),
            hit_out: Default::default(),
            hit_pend: Default::default(),
            hit_scan: Default::default(),
            cand: Default::default(),
            age: (0..L).map(|_| Default::default()).collect(),
            eval: Default::default(),
            issue: Default::default(),
            free: Default::default(),
            pick: Default::default(),
            emit: Default::default(),
            entry: Default::default(),
            c_lane: (0..L).map(|i| Constant::new((i as u64).into())).collect(),
            c_lane_e: (0..L).map(|i| Constant::new((i as u64).into())).collect(),
            c_tick: Constant::new(u64::from(tick_cycles - 1).into()),
            c_a_last: Constant::new(((1u64 << A) - 1).into()),
            c_shift: Constant::new((LB as u64).into()),
        }
    }

    /// Entries (timers) this build holds.
    pub const ENTRIES: usize = 1 << E;
    /// Entries read per cycle.
    pub const LANES: usize = L;
    /// Cycles of one scan with no expiries.
    pub const SCAN_CYCLES: usize = 1 << A;
}

impl<const E: usize, const A: usize, const LB: usize, const L: usize> Logic
    for QpTimers<E, A, LB, L>
{
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, now_q, tdiv, init, scan_a, out_valid, out_a, wsr, pend, pend_a, armed,
            expired
        );
        clock!(self, clock, exp);
        for i in 0..self.banks.len() {
            self.banks[i].clock.next = self.clock.val();
        }
        self.exp.reset.next = self.reset.val();

        // Time: `now` advances once every tick.
        if self.tdiv.q.val() == self.c_tick.val() {
            self.tdiv.d.next = 0.into();
            self.now_q.d.next = self.now_q.q.val() + 1;
        } else {
            self.tdiv.d.next = self.tdiv.q.val() + 1;
        }
        self.now.next = self.now_q.q.val();
        self.busy.next = self.init.q.val();
        self.cnt_armed.next = self.armed.q.val();
        self.cnt_expired.next = self.expired.q.val();

        // Arms: the bank and address of the entry, and the word written.
        self.s_arm_ready.next = !self.init.q.val();
        self.arm_fire.next = self.s_arm_valid.val() & !self.init.q.val();
        self.arm_lane.next = self.s_arm_entry.val().get_bits::<LB>(0);
        self.arm_addr.next = self
            .s_arm_entry
            .val()
            .get_bits::<A>(self.c_shift.val().index());
        if self.s_arm_delay.val().get_bit(31) {
            self.delay.next = 0x7FFF_FFFF.into();
        } else {
            self.delay.next = self.s_arm_delay.val();
        }
        self.arm_word.next = bit_cast::<33, 32>(self.now_q.q.val() + self.delay.val());
        if !self.s_arm_disarm.val() {
            self.arm_word.next = self.arm_word.val().replace_bit(32, true);
        } else {
            self.arm_word.next = 0.into();
        }
        self.arm_hit.next = 0.into();
        for i in 0..self.banks.len() {
            if self.arm_fire.val() & (self.arm_lane.val() == self.c_lane[i].val()) {
                self.arm_hit.next = self.arm_hit.val().replace_bit(i, true);
            }
        }
        // Lanes an arm writes at the word at the RAM outputs, at the word
        // being reported, and at the address read this cycle.
        if self.arm_addr.val() == self.out_a.q.val() {
            self.hit_out.next = self.arm_hit.val();
        } else {
            self.hit_out.next = 0.into();
        }
        if self.arm_addr.val() == self.pend_a.q.val() {
            self.hit_pend.next = self.arm_hit.val();
        } else {
            self.hit_pend.next = 0.into();
        }
        if self.arm_addr.val() == self.scan_a.q.val() {
            self.hit_scan.next = self.arm_hit.val();
        } else {
            self.hit_scan.next = 0.into();
        }

        // Evaluate the word at the RAM outputs once the last one is
        // reported: lanes armed and due, less those written since the read.
        self.cand.next = 0.into();
        for i in 0..self.banks.len() {
            self.age[i].next = self.now_q.q.val() - self.banks[i].read_data.val().get_bits::<32>(0);
            if self.banks[i].read_data.val().get_bit(32) & !self.age[i].val().get_bit(31) {
                self.cand.next = self.cand.val().replace_bit(i, true);
            }
        }
        self.eval.next = self.out_valid.q.val() & !self.pend.q.val().any() & !self.init.q.val();
        self.issue.next = (!self.out_valid.q.val() | self.eval.val()) & !self.init.q.val();

        // Report the lowest pending lane whose bank no arm writes in this
        // cycle, if the queue has room; its RAM word is cleared.
        self.free.next = self.pend.q.val() & !self.arm_hit.val();
        self.pick.next = self.free.val() & (!self.free.val() + 1);
        self.emit.next = self.free.val().any() & !self.exp.full.val();
        self.entry.next = bit_cast::<E, A>(self.pend_a.q.val()) << self.c_shift.val();
        for i in 0..self.banks.len() {
            if self.pick.val().get_bit(i) {
                self.entry.next = self.entry.val() | self.c_lane_e[i].val();
            }
        }
        self.exp.write.next = self.emit.val();
        self.exp.data_in.next = self.entry.val();
        if self.emit.val() {
            self.expired.d.next = self.expired.q.val() + 1;
        }
        if self.arm_fire.val() {
            self.armed.d.next = self.armed.q.val() + 1;
        }

        // Pending lanes: reported ones leave, arms supersede; a new word's
        // candidates arrive when it is evaluated.
        if self.eval.val() {
            self.pend.d.next = self.cand.val() & !(self.wsr.q.val() | self.hit_out.val());
            self.pend_a.d.next = self.out_a.q.val();
        } else if self.emit.val() {
            self.pend.d.next = self.pend.q.val() & !self.pick.val() & !self.hit_pend.val();
        } else {
            self.pend.d.next = self.pend.q.val() & !self.hit_pend.val();
        }

        // Reads: all banks at `scan_a` whenever the outputs are free next
        // cycle (holding otherwise, so the word stays at the outputs).
        for i in 0..self.banks.len() {
            self.banks[i].read_enable.next = self.issue.val();
            self.banks[i].read_address.next = self.scan_a.q.val();
        }
        if self.issue.val() {
            self.scan_a.d.next = self.scan_a.q.val() + 1;
            self.out_a.d.next = self.scan_a.q.val();
            self.out_valid.d.next = true;
            // A write in the cycle of the read is not in the word read.
            self.wsr.d.next = self.hit_scan.val();
        } else {
            self.wsr.d.next = self.wsr.q.val() | self.hit_out.val();
        }

        // Writes: an arm, else a reported lane's clear, else (the clearing
        // pass) zeros at `scan_a`.
        for i in 0..self.banks.len() {
            self.banks[i].write_enable.next = false;
            self.banks[i].write_address.next = self.arm_addr.val();
            self.banks[i].write_data.next = self.arm_word.val();
            if self.arm_hit.val().get_bit(i) {
                self.banks[i].write_enable.next = true;
            } else if self.emit.val() & self.pick.val().get_bit(i) {
                self.banks[i].write_enable.next = true;
                self.banks[i].write_address.next = self.pend_a.q.val();
                self.banks[i].write_data.next = 0.into();
            } else if self.init.q.val() {
                self.banks[i].write_enable.next = true;
                self.banks[i].write_address.next = self.scan_a.q.val();
                self.banks[i].write_data.next = 0.into();
            }
        }
        if self.init.q.val() {
            self.scan_a.d.next = self.scan_a.q.val() + 1;
            if self.scan_a.q.val() == self.c_a_last.val() {
                self.init.d.next = false;
            }
        }

        // The expiry queue's head.
        self.m_exp_valid.next = !self.exp.empty.val();
        self.m_exp_entry.next = self.exp.data_out.val();
        self.exp.read.next = self.m_exp_ready.val();

        if self.reset.val() {
            self.init.d.next = true;
            self.scan_a.d.next = 0.into();
            self.out_valid.d.next = false;
            self.pend.d.next = 0.into();
            self.now_q.d.next = 0.into();
            self.tdiv.d.next = 0.into();
            self.armed.d.next = 0.into();
            self.expired.d.next = 0.into();
        }
    }
}

/// The default build: 1024 QPs × 2 timers (local ACK timeout, RNR wait),
/// 16 banks of 128, a 128-cycle tick (0.82 µs at 156.25 MHz).
pub type QpTimersDefault = QpTimers<11, 7, 4, 16>;
/// A small build for tests: 64 QPs × 2 timers, 8 banks of 16, a 16-cycle tick.
pub type QpTimersSmall = QpTimers<7, 4, 3, 8>;
/// Ticks of the catalogue builds, in cycles.
pub const DEFAULT_TICK: u16 = 128;
/// Tick of the small build, in cycles.
pub const SMALL_TICK: u16 = 16;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qp_timers_synthesizes() {
        let mut uut = QpTimersSmall::new(SMALL_TICK);
        uut.connect_all();
        yosys_validate("qp_timers", &generate_verilog(&uut)).unwrap();
    }
}
