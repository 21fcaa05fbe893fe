// fw_soc: PicoRV32 + on-chip RAM + the roce-hw CSR block (csr_w256), for
// the firmware co-simulation (sim/src/fw/picorv32.rs). Simulation only.
//
//   PicoRV32 (native memory interface, RV32IMC)
//     addr < RAM_BYTES                    -> RAM (look-ahead, no wait state)
//     CSR_BASE <= addr < CSR_BASE+window  -> AXI4-Lite master ─┐
//     anything else                       -> bus_error (sticky)  ├─ arbiter ─> csr_w256
//   host AXI4-Lite port s_axil_* ─────────────────────────────────┘
//
// The arbiter passes one whole transaction (AW+W then B, or AR then R) of
// one master at a time; the core first when both ask. A host write is
// granted once both AWVALID and WVALID are up (an AXI slave may wait for
// both). The RAM is loaded through the backdoor port ram_we/ram_waddr/
// ram_wdata while reset is high. The cpu_csr_* outputs pulse for one cycle
// when a core CSR transaction completes (a probe for measurements).
//
// Sizes come from roce-regs and the generated CSR block through defines set
// by sim/build.rs: FW_RAM_WORDS, FW_RAM_ABITS, FW_CSR_BASE, FW_CSR_ABITS,
// FW_CTR_BITS, FW_QA, FW_CTX_BITS.

module fw_soc(
    input  wire                     clock,
    input  wire                     reset,
    input  wire                     ram_we,
    input  wire [`FW_RAM_ABITS-1:0] ram_waddr,
    input  wire [31:0]              ram_wdata,
    input  wire [`FW_CSR_ABITS-1:0] s_axil_awaddr,
    input  wire                     s_axil_awvalid,
    output wire                     s_axil_awready,
    input  wire [31:0]              s_axil_wdata,
    input  wire [3:0]               s_axil_wstrb,
    input  wire                     s_axil_wvalid,
    output wire                     s_axil_wready,
    output wire [1:0]               s_axil_bresp,
    output wire                     s_axil_bvalid,
    input  wire                     s_axil_bready,
    input  wire [`FW_CSR_ABITS-1:0] s_axil_araddr,
    input  wire                     s_axil_arvalid,
    output wire                     s_axil_arready,
    output wire [31:0]              s_axil_rdata,
    output wire [1:0]               s_axil_rresp,
    output wire                     s_axil_rvalid,
    input  wire                     s_axil_rready,
    input  wire [`FW_CTR_BITS-1:0]  counters,
    input  wire [`FW_QA-1:0]        qp_rd_addr,
    output wire [`FW_CTX_BITS-1:0]  qp_rd_data,
    output wire                     trap,
    output reg                      bus_error,
    output reg                      cpu_csr_done,
    output reg                      cpu_csr_write,
    output reg  [`FW_CSR_ABITS-1:0] cpu_csr_addr,
    output reg  [31:0]              cpu_csr_wdata
);
    // The core's AXI4-Lite master (c_*) and the CSR block's port (s_*).
    reg                     c_busy, c_aw, c_w, c_ar;
    reg  [`FW_CSR_ABITS-1:0] c_addr;
    reg  [31:0]             c_wdata;
    reg  [3:0]              c_wstrb;
    wire c_awready, c_wready, c_bvalid, c_arready, c_rvalid;
    wire s_awready, s_wready, s_bvalid, s_arready, s_rvalid;
    wire [1:0]  s_bresp, s_rresp;
    wire [31:0] s_rdata;

    // ---- the core ----------------------------------------------------------
    wire        mem_valid, mem_instr, mem_la_read, mem_la_write;
    wire [31:0] mem_addr, mem_wdata, mem_la_addr, mem_la_wdata;
    wire [3:0]  mem_wstrb, mem_la_wstrb;
    wire        ram_ready;
    reg         csr_ready, err_ready;
    reg  [31:0] ram_rdata, csr_rdata;
    wire        mem_ready = ram_ready | csr_ready | err_ready;
    wire [31:0] mem_rdata = csr_ready ? csr_rdata : ram_ready ? ram_rdata : 32'h0;

    picorv32 #(
        .COMPRESSED_ISA(1),
        .ENABLE_MUL(1),
        .ENABLE_DIV(1),
        .BARREL_SHIFTER(1),
        .ENABLE_IRQ(0),
        .PROGADDR_RESET(32'h0)
    ) cpu (
        .clk(clock), .resetn(!reset), .trap(trap),
        .mem_valid(mem_valid), .mem_instr(mem_instr), .mem_ready(mem_ready),
        .mem_addr(mem_addr), .mem_wdata(mem_wdata), .mem_wstrb(mem_wstrb),
        .mem_rdata(mem_rdata),
        .mem_la_read(mem_la_read), .mem_la_write(mem_la_write),
        .mem_la_addr(mem_la_addr), .mem_la_wdata(mem_la_wdata), .mem_la_wstrb(mem_la_wstrb),
        .pcpi_wr(1'b0), .pcpi_rd(32'h0), .pcpi_wait(1'b0), .pcpi_ready(1'b0),
        .irq(32'h0)
    );

    wire is_ram = mem_addr < (`FW_RAM_WORDS * 4);
    wire is_csr = mem_addr >= `FW_CSR_BASE &&
                  mem_addr < `FW_CSR_BASE + (1 << `FW_CSR_ABITS);
    // A new access: valid, and not the cycle its ready is up.
    wire access = mem_valid && !mem_ready;

    // ---- RAM -----------------------------------------------------------------
    // Through PicoRV32's look-ahead interface: mem_la_read/mem_la_write pulse
    // in the cycle before mem_valid with the same address (and write data),
    // so the RAM is read or written at that edge and answers mem_ready
    // combinationally in mem_valid's first cycle: no wait state.
    reg [31:0] ram [0:`FW_RAM_WORDS-1];
    reg        la_hit;
    wire [`FW_RAM_ABITS-1:0] la_word = mem_la_addr[`FW_RAM_ABITS+1:2];
    wire la_is_ram = mem_la_addr < (`FW_RAM_WORDS * 4);
    always @(posedge clock) begin
        la_hit <= 1'b0;
        if (reset) begin
            if (ram_we) ram[ram_waddr] <= ram_wdata;
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
    assign ram_ready = mem_valid && la_hit;

    always @(posedge clock) begin
        err_ready <= 1'b0;
        if (reset) bus_error <= 1'b0;
        else begin
            if (access && !is_ram && !is_csr && !err_ready) begin
                err_ready <= 1'b1;
                bus_error <= 1'b1;
            end
            // A core CSR transaction not answered OKAY is a firmware bug too.
            if (c_busy && ((c_bvalid && s_bresp != 2'b00) || (c_rvalid && s_rresp != 2'b00)))
                bus_error <= 1'b1;
        end
    end

    // ---- the core's AXI4-Lite master -------------------------------------------
    // A CSR access is offered to the arbiter in mem_valid's first cycle
    // (c_*_e); c_* hold what is still to be handshaken after it.
    wire c_start = access && is_csr && !c_busy && !csr_ready;
    wire c_wr = |mem_wstrb;
    wire c_aw_e = c_busy ? c_aw : c_start && c_wr;
    wire c_w_e  = c_busy ? c_w  : c_start && c_wr;
    wire c_ar_e = c_busy ? c_ar : c_start && !c_wr;
    wire [`FW_CSR_ABITS-1:0] c_addr_e = c_busy ? c_addr : mem_addr[`FW_CSR_ABITS-1:0];
    wire [31:0] c_wdata_e = c_busy ? c_wdata : mem_wdata;
    wire [3:0]  c_wstrb_e = c_busy ? c_wstrb : mem_wstrb;
    always @(posedge clock) begin
        csr_ready <= 1'b0;
        cpu_csr_done <= 1'b0;
        if (reset) begin
            c_busy <= 1'b0; c_aw <= 1'b0; c_w <= 1'b0; c_ar <= 1'b0;
        end else begin
            if (c_start) begin
                c_busy  <= 1'b1;
                c_addr  <= c_addr_e;
                c_wdata <= c_wdata_e;
                c_wstrb <= c_wstrb_e;
                c_aw    <= c_wr && !c_awready;
                c_w     <= c_wr && !c_wready;
                c_ar    <= !c_wr && !c_arready;
            end else begin
                if (c_aw && c_awready) c_aw <= 1'b0;
                if (c_w && c_wready) c_w <= 1'b0;
                if (c_ar && c_arready) c_ar <= 1'b0;
            end
            // bready = rready = 1 for the core; no response comes in the
            // start cycle (the CSR block registers its responses).
            if (c_busy && (c_bvalid || c_rvalid)) begin
                c_busy        <= 1'b0;
                csr_ready     <= 1'b1;
                csr_rdata     <= s_rdata;
                cpu_csr_done  <= 1'b1;
                cpu_csr_write <= c_bvalid;
                cpu_csr_addr  <= c_addr;
                cpu_csr_wdata <= c_wdata;
            end
        end
    end

    // ---- arbiter: core (C) and host (H) onto the CSR block's port (S) ---------
    // The grant takes effect in the cycle a request appears (IDLE passes the
    // requester through) and is held in `grant` until its response is taken.
    localparam IDLE = 2'd0, CORE = 2'd1, HOST = 2'd2;
    reg [1:0] grant;
    reg       gwrite;
    // One transaction per grant: an address or data beat already passed is
    // not passed again (a master with a second request queued waits).
    reg       g_aw, g_w, g_ar;
    wire c_req_w = c_aw_e && c_w_e, c_req_r = c_ar_e, c_req = c_req_w || c_req_r;
    wire h_req_w = s_axil_awvalid && s_axil_wvalid, h_req_r = s_axil_arvalid;
    wire h_req = h_req_w || h_req_r;
    wire idle = grant == IDLE;
    wire gc = grant == CORE || (idle && c_req);
    wire gh = grant == HOST || (idle && !c_req && h_req);
    wire gw = idle ? (c_req ? c_req_w : h_req_w) : gwrite;
    always @(posedge clock) begin
        if (idle) begin g_aw <= 1'b0; g_w <= 1'b0; g_ar <= 1'b0; end
        if (s_awvalid && s_awready) g_aw <= 1'b1;
        if (s_wvalid && s_wready) g_w <= 1'b1;
        if (s_arvalid && s_arready) g_ar <= 1'b1;
        if (reset) grant <= IDLE;
        else case (grant)
            IDLE:
                if (c_req) begin grant <= CORE; gwrite <= c_req_w; end
                else if (h_req) begin grant <= HOST; gwrite <= h_req_w; end
            CORE:
                if (gwrite ? s_bvalid : s_rvalid) grant <= IDLE;
            HOST:
                if (gwrite ? s_bvalid && s_axil_bready : s_rvalid && s_axil_rready) grant <= IDLE;
            default: grant <= IDLE;
        endcase
    end
    wire sel_w = gw, sel_r = !gw;
    wire s_awvalid = sel_w && !g_aw && (gc ? c_aw_e : gh ? s_axil_awvalid : 1'b0);
    wire s_wvalid  = sel_w && !g_w  && (gc ? c_w_e  : gh ? s_axil_wvalid  : 1'b0);
    wire s_arvalid = sel_r && !g_ar && (gc ? c_ar_e : gh ? s_axil_arvalid : 1'b0);
    wire s_bready  = gc ? 1'b1 : gh ? s_axil_bready : 1'b0;
    wire s_rready  = gc ? 1'b1 : gh ? s_axil_rready : 1'b0;
    assign c_awready = gc && sel_w && !g_aw && s_awready;
    assign c_wready  = gc && sel_w && !g_w && s_wready;
    assign c_arready = gc && sel_r && !g_ar && s_arready;
    assign c_bvalid  = gc && sel_w && s_bvalid;
    assign c_rvalid  = gc && sel_r && s_rvalid;
    assign s_axil_awready = gh && sel_w && !g_aw && s_awready;
    assign s_axil_wready  = gh && sel_w && !g_w && s_wready;
    assign s_axil_arready = gh && sel_r && !g_ar && s_arready;
    assign s_axil_bvalid  = gh && sel_w && s_bvalid;
    assign s_axil_rvalid  = gh && sel_r && s_rvalid;
    assign s_axil_bresp   = s_bresp;
    assign s_axil_rresp   = s_rresp;
    assign s_axil_rdata   = s_rdata;

    csr_w256 csr (
        .clock(clock), .reset(reset),
        .s_axil_awaddr(gc ? c_addr_e : s_axil_awaddr), .s_axil_awvalid(s_awvalid),
        .s_axil_awready(s_awready),
        .s_axil_wdata(gc ? c_wdata_e : s_axil_wdata), .s_axil_wstrb(gc ? c_wstrb_e : s_axil_wstrb),
        .s_axil_wvalid(s_wvalid), .s_axil_wready(s_wready),
        .s_axil_bresp(s_bresp), .s_axil_bvalid(s_bvalid), .s_axil_bready(s_bready),
        .s_axil_araddr(gc ? c_addr_e : s_axil_araddr), .s_axil_arvalid(s_arvalid),
        .s_axil_arready(s_arready),
        .s_axil_rdata(s_rdata), .s_axil_rresp(s_rresp), .s_axil_rvalid(s_rvalid),
        .s_axil_rready(s_rready),
        .counters(counters), .qp_rd_addr(qp_rd_addr), .qp_rd_data(qp_rd_data),
        // csr_w256 serves one datapath port; ports 1 and 2 read 0.
        .qp_rd_addr_1({`FW_QA{1'b0}}), .qp_rd_data_1(),
        .qp_rd_addr_2({`FW_QA{1'b0}}), .qp_rd_data_2(),
        .m_ctx_wr_valid(), .m_ctx_wr_qpn(), .m_ctx_wr_offset(), .m_ctx_wr_data(),
        .cfg_mac(), .cfg_udp_sport(), .cfg_gid(), .cfg_pkey()
    );
endmodule
