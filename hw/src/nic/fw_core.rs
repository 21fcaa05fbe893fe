//! `fw_core`: the NIC's softcore, PicoRV32 (RV32IMC) with its program RAM
//! and an AXI4-Lite master onto the register bus (issue 36 §2). The
//! firmware (`firmware/`, `roce-fw`) runs from this RAM and serves the
//! command mailbox: modify QP, MR commands (DESIGN §4).
//!
//! - **RAM**: `2^RA` 32-bit words at address 0, read and written through
//!   PicoRV32's look-ahead interface (no wait state), as the firmware
//!   co-simulation's `sim/verilog/fw_soc.v` does. It is loaded through
//!   `fw_we`/`fw_waddr`/`fw_wdata` while `reset` is high, or at
//!   configuration time from a hex file: define `ROCE_FW_HEX` (a quoted
//!   path, `$readmemh` format) when synthesising.
//! - **Register bus**: an access to `[CSR_BASE, CSR_BASE + window)` becomes
//!   one AXI4-Lite transaction on `m_axil_*` (addresses relative to the
//!   window): AW and W together for a store, AR for a load, BREADY and
//!   RREADY held high. The core waits for the response (a registered
//!   master: the transaction starts the cycle after `mem_valid`).
//! - **Bus errors**: an access outside RAM and the window, or a response
//!   other than OKAY, sets the sticky `bus_error` (a firmware bug); the core
//!   is answered (reads 0) so it does not hang. `trap` is PicoRV32's.
//!
//! The PicoRV32 module itself is not generated here: its Verilog
//! (`picorv32.v`, the PyPI package `pythondata-cpu-picorv32`, installed
//! by `scripts/setup`) is added beside this block's Verilog by whoever
//! builds the design (`roce-gen`, `sim/build.rs`). The Rust model of this
//! block does not run the core: rust-hdl simulation of a design with it
//! sees an idle bus (no transaction, no error); the NIC is simulated in
//! Verilator.

use crate::csr::ADDR_BITS;
use roce_regs::{CSR_BASE, CSR_WINDOW_SIZE};
use rust_hdl_core::prelude::*;
use rust_hdl_core::timing::TimingInfo;

#[derive(LogicBlock)]
pub struct FwCore<const RA: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    /// Program loader (while `reset` is high): write word `fw_waddr`.
    pub fw_we: Signal<In, Bit>,
    pub fw_waddr: Signal<In, Bits<RA>>,
    pub fw_wdata: Signal<In, Bits<32>>,
    pub m_axil_awaddr: Signal<Out, Bits<ADDR_BITS>>,
    pub m_axil_awvalid: Signal<Out, Bit>,
    pub m_axil_awready: Signal<In, Bit>,
    pub m_axil_wdata: Signal<Out, Bits<32>>,
    pub m_axil_wstrb: Signal<Out, Bits<4>>,
    pub m_axil_wvalid: Signal<Out, Bit>,
    pub m_axil_wready: Signal<In, Bit>,
    pub m_axil_bresp: Signal<In, Bits<2>>,
    pub m_axil_bvalid: Signal<In, Bit>,
    pub m_axil_bready: Signal<Out, Bit>,
    pub m_axil_araddr: Signal<Out, Bits<ADDR_BITS>>,
    pub m_axil_arvalid: Signal<Out, Bit>,
    pub m_axil_arready: Signal<In, Bit>,
    pub m_axil_rdata: Signal<In, Bits<32>>,
    pub m_axil_rresp: Signal<In, Bits<2>>,
    pub m_axil_rvalid: Signal<In, Bit>,
    pub m_axil_rready: Signal<Out, Bit>,
    /// PicoRV32 trapped (an illegal instruction or a misaligned access).
    pub trap: Signal<Out, Bit>,
    /// Sticky: an access outside RAM and the CSR window, or a register
    /// access not answered OKAY.
    pub bus_error: Signal<Out, Bit>,
}

impl<const RA: usize> FwCore<RA> {
    pub fn new() -> Self {
        assert!((8..=16).contains(&RA), "fw_core: RA = {RA} out of 8..=16");
        Self {
            clock: Default::default(),
            reset: Default::default(),
            fw_we: Default::default(),
            fw_waddr: Default::default(),
            fw_wdata: Default::default(),
            m_axil_awaddr: Default::default(),
            m_axil_awvalid: Default::default(),
            m_axil_awready: Default::default(),
            m_axil_wdata: Default::default(),
            m_axil_wstrb: Default::default(),
            m_axil_wvalid: Default::default(),
            m_axil_wready: Default::default(),
            m_axil_bresp: Default::default(),
            m_axil_bvalid: Default::default(),
            m_axil_bready: Default::default(),
            m_axil_araddr: Default::default(),
            m_axil_arvalid: Default::default(),
            m_axil_arready: Default::default(),
            m_axil_rdata: Default::default(),
            m_axil_rresp: Default::default(),
            m_axil_rvalid: Default::default(),
            m_axil_rready: Default::default(),
            trap: Default::default(),
            bus_error: Default::default(),
        }
    }
}

impl<const RA: usize> Default for FwCore<RA> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const RA: usize> Logic for FwCore<RA> {
    fn update(&mut self) {
        // The core is not modelled in Rust (see the module doc).
        self.m_axil_awaddr.next = 0.into();
        self.m_axil_awvalid.next = false;
        self.m_axil_wdata.next = 0.into();
        self.m_axil_wstrb.next = 0.into();
        self.m_axil_wvalid.next = false;
        self.m_axil_bready.next = true;
        self.m_axil_araddr.next = 0.into();
        self.m_axil_arvalid.next = false;
        self.m_axil_rready.next = true;
        self.trap.next = false;
        self.bus_error.next = false;
    }

    fn connect(&mut self) {
        self.m_axil_awaddr.connect();
        self.m_axil_awvalid.connect();
        self.m_axil_wdata.connect();
        self.m_axil_wstrb.connect();
        self.m_axil_wvalid.connect();
        self.m_axil_bready.connect();
        self.m_axil_araddr.connect();
        self.m_axil_arvalid.connect();
        self.m_axil_rready.connect();
        self.trap.connect();
        self.bus_error.connect();
    }

    fn hdl(&self) -> Verilog {
        Verilog::Custom(verilog(RA))
    }

    fn timing(&self) -> Vec<TimingInfo> {
        vec![TimingInfo {
            name: "fw_core".into(),
            clock: "clock".into(),
            inputs: vec![
                "fw_we".into(),
                "fw_waddr".into(),
                "fw_wdata".into(),
                "m_axil_awready".into(),
                "m_axil_wready".into(),
                "m_axil_bresp".into(),
                "m_axil_bvalid".into(),
                "m_axil_arready".into(),
                "m_axil_rdata".into(),
                "m_axil_rresp".into(),
                "m_axil_rvalid".into(),
            ],
            outputs: vec![
                "m_axil_awaddr".into(),
                "m_axil_awvalid".into(),
                "m_axil_wdata".into(),
                "m_axil_wstrb".into(),
                "m_axil_wvalid".into(),
                "m_axil_araddr".into(),
                "m_axil_arvalid".into(),
                "trap".into(),
                "bus_error".into(),
            ],
        }]
    }
}

/// The block's Verilog body for `2^ra` RAM words.
fn verilog(ra: usize) -> String {
    let words = 1u64 << ra;
    let ab = ADDR_BITS;
    let base = CSR_BASE;
    let window = CSR_WINDOW_SIZE;
    format!(
        r#"
// PicoRV32: RV32IMC, no IRQ (the firmware polls), reset vector 0.
wire        mem_valid, mem_instr, mem_la_read, mem_la_write, cpu_trap;
wire [31:0] mem_addr, mem_wdata, mem_la_addr, mem_la_wdata;
wire [3:0]  mem_wstrb, mem_la_wstrb;
reg         la_hit, csr_ready, err_ready, c_busy;
reg  [31:0] ram_rdata, csr_rdata;
wire        ram_ready = mem_valid && la_hit;
wire        mem_ready = ram_ready | csr_ready | err_ready;
wire [31:0] mem_rdata = csr_ready ? csr_rdata : err_ready ? 32'h0 : ram_rdata;

picorv32 #(
    .COMPRESSED_ISA(1),
    .ENABLE_MUL(1),
    .ENABLE_DIV(1),
    .BARREL_SHIFTER(1),
    .ENABLE_IRQ(0),
    .PROGADDR_RESET(32'h0)
) cpu (
    .clk(clock), .resetn(!reset), .trap(cpu_trap),
    .mem_valid(mem_valid), .mem_instr(mem_instr), .mem_ready(mem_ready),
    .mem_addr(mem_addr), .mem_wdata(mem_wdata), .mem_wstrb(mem_wstrb),
    .mem_rdata(mem_rdata),
    .mem_la_read(mem_la_read), .mem_la_write(mem_la_write),
    .mem_la_addr(mem_la_addr), .mem_la_wdata(mem_la_wdata), .mem_la_wstrb(mem_la_wstrb),
    .pcpi_valid(), .pcpi_insn(), .pcpi_rs1(), .pcpi_rs2(),
    .pcpi_wr(1'b0), .pcpi_rd(32'h0), .pcpi_wait(1'b0), .pcpi_ready(1'b0),
    .irq(32'h0), .eoi(), .trace_valid(), .trace_data()
);

wire is_ram = mem_addr < 32'd{ram_bytes};
wire is_csr = mem_addr >= 32'd{base} && mem_addr < 32'd{base} + 32'd{window};
// A new access: valid, and not the cycle its ready is up.
wire access = mem_valid && !mem_ready;

// ---- RAM: written and read at the look-ahead edge, ready in mem_valid's
// first cycle.
reg [31:0] ram [0:{last}];
`ifdef ROCE_FW_HEX
initial $readmemh(`ROCE_FW_HEX, ram);
`endif
wire [{ram_msb}:0] la_word = mem_la_addr[{la_msb}:2];
wire la_is_ram = mem_la_addr < 32'd{ram_bytes};
always @(posedge clock) begin
    la_hit <= 1'b0;
    if (reset) begin
        if (fw_we) ram[fw_waddr] <= fw_wdata;
    end else if ((mem_la_read || mem_la_write) && la_is_ram) begin
        la_hit    <= 1'b1;
        ram_rdata <= ram[la_word];
        if (mem_la_write) begin
            if (mem_la_wstrb[0]) ram[la_word][7:0]   <= mem_la_wdata[7:0];
            if (mem_la_wstrb[1]) ram[la_word][15:8]  <= mem_la_wdata[15:8];
            if (mem_la_wstrb[2]) ram[la_word][23:16] <= mem_la_wdata[23:16];
            if (mem_la_wstrb[3]) ram[la_word][31:24] <= mem_la_wdata[31:24];
        end
    end
end

// ---- The AXI4-Lite master: one transaction per register access.
always @(posedge clock) begin
    csr_ready <= 1'b0;
    err_ready <= 1'b0;
    if (reset) begin
        c_busy         <= 1'b0;
        m_axil_awvalid <= 1'b0;
        m_axil_wvalid  <= 1'b0;
        m_axil_arvalid <= 1'b0;
        bus_error      <= 1'b0;
    end else begin
        if (access && !is_ram && !is_csr && !err_ready) begin
            err_ready <= 1'b1;
            bus_error <= 1'b1;
        end
        if (access && is_csr && !c_busy && !csr_ready) begin
            c_busy        <= 1'b1;
            m_axil_awaddr <= mem_addr[{ab_msb}:0];
            m_axil_araddr <= mem_addr[{ab_msb}:0];
            m_axil_wdata  <= mem_wdata;
            m_axil_wstrb  <= mem_wstrb;
            if (|mem_wstrb) begin
                m_axil_awvalid <= 1'b1;
                m_axil_wvalid  <= 1'b1;
            end else begin
                m_axil_arvalid <= 1'b1;
            end
        end
        if (m_axil_awvalid && m_axil_awready) m_axil_awvalid <= 1'b0;
        if (m_axil_wvalid && m_axil_wready) m_axil_wvalid <= 1'b0;
        if (m_axil_arvalid && m_axil_arready) m_axil_arvalid <= 1'b0;
        if (c_busy && (m_axil_bvalid || m_axil_rvalid)) begin
            c_busy    <= 1'b0;
            csr_ready <= 1'b1;
            csr_rdata <= m_axil_rdata;
            if ((m_axil_bvalid && m_axil_bresp != 2'b00) ||
                (m_axil_rvalid && m_axil_rresp != 2'b00))
                bus_error <= 1'b1;
        end
    end
end

always @(*) begin
    m_axil_bready = 1'b1;
    m_axil_rready = 1'b1;
    trap = cpu_trap;
end
"#,
        ram_bytes = words * 4,
        last = words - 1,
        ram_msb = ra - 1,
        la_msb = ra + 1,
        ab_msb = ab - 1,
    )
}
