//! Memory regions: the MR table and TLB, and its control through the CSRs.

pub mod mr_ctrl;
pub mod mr_tlb;
