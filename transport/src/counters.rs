//! Per-QP event counters (DESIGN §6.9): one enum, one name table.
//!
//! Every packet the model drops, every NAK it sends and every retry it
//! starts is counted under exactly one reason, so a hardware run can be
//! compared counter by counter.

macro_rules! counters {
    ($( $(#[$doc:meta])* $v:ident = $name:literal, )*) => {
        /// One counted event.
        #[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
        pub enum Counter {
            $( $(#[$doc])* $v, )*
        }

        impl Counter {
            /// Every counter, in table order.
            pub const ALL: &'static [Counter] = &[$(Counter::$v),*];

            /// The counter's name (kebab-case, as a CSR table or CLI prints it).
            pub const fn name(self) -> &'static str {
                match self {
                    $(Counter::$v => $name,)*
                }
            }
        }
    };
}

counters! {
    /// A packet for a QP whose state does not accept it (Reset, Init, Error;
    /// requests before RTR, responses before RTS).
    DropQpState = "drop-qp-state",
    /// BTH DestQP is not this QP.
    DropDestQp = "drop-dest-qp",
    /// BTH P_Key differs from the QP's.
    DropPkey = "drop-pkey",
    /// An opcode of another transport service than the QP's, or one the
    /// opcode table does not know.
    DropTransport = "drop-transport",
    /// Extension headers that do not match the opcode.
    DropMalformed = "drop-malformed",
    /// UD: DETH Q_Key differs from the QP's.
    DropQkey = "drop-qkey",
    /// RC: a request ahead of ePSN after the one sequence NAK was sent.
    DropOutOfSequence = "drop-out-of-sequence",
    /// RC: a duplicate READ or atomic without a matching responder resource.
    DropDuplicateNoResource = "drop-dup-no-resource",
    /// UC: a packet of a message that lost a packet, or broke the opcode
    /// sequence, or failed a check (the whole message is dropped).
    DropUcMessage = "drop-uc-message",
    /// UD: a SEND with no receive WQE posted.
    DropUdNoRecv = "drop-ud-no-recv",
    /// UD: a SEND longer than the PMTU or than the receive WQE.
    DropUdLength = "drop-ud-length",
    /// A response (ACK, READ response, ATOMIC ACK) for a PSN never sent, or
    /// one that does not fit the request it names.
    DropUnexpectedResponse = "drop-unexpected-response",
    /// A response for a PSN already acknowledged (duplicate ACK, late READ
    /// response).
    DropStaleResponse = "drop-stale-response",
    /// A READ response ahead of the next expected response PSN.
    DropResponseOutOfOrder = "drop-response-out-of-order",
    /// A request that arrived to the responder as a duplicate (PSN behind ePSN).
    DuplicateRequest = "dup-request",
    /// A duplicate READ answered again from the responder resources.
    ReadReplay = "read-replay",
    /// A duplicate atomic answered with the saved original value.
    AtomicReplay = "atomic-replay",
    /// ACKs sent.
    AckSent = "ack-sent",
    /// ACKs merged into a later one before they were sent.
    AckCoalesced = "ack-coalesced",
    /// PSN sequence error NAKs sent.
    NakPsnSeqSent = "nak-psn-seq-sent",
    /// Invalid request NAKs sent.
    NakInvalidRequestSent = "nak-invalid-request-sent",
    /// Remote access error NAKs sent.
    NakRemoteAccessSent = "nak-remote-access-sent",
    /// Remote operational error NAKs sent.
    NakRemoteOpSent = "nak-remote-op-sent",
    /// RNR NAKs sent.
    RnrNakSent = "rnr-nak-sent",
    /// Frames received with ECN CE.
    CeReceived = "ce-received",
    /// CNPs sent.
    CnpSent = "cnp-sent",
    /// CE marks that did not cause a CNP (inside the CNP interval).
    CnpSuppressed = "cnp-suppressed",
    /// CNPs received.
    CnpReceived = "cnp-received",
    /// Request packets sent for the first time.
    RequestSent = "request-sent",
    /// Request packets sent again (go-back-N, RNR retry).
    RequestRetransmitted = "request-retransmitted",
    /// Go-back-N started by the local ACK timeout.
    RetryTimeout = "retry-timeout",
    /// Go-back-N started by a PSN sequence error NAK.
    RetrySeqNak = "retry-seq-nak",
    /// Go-back-N started because an ACK passed a READ or atomic whose
    /// response was lost.
    RetryImplied = "retry-implied",
    /// A NAK-driven or implied go-back-N not started because one already
    /// ran without progress since (duplicate NAKs, duplicate ACKs).
    RetryIgnored = "retry-ignored",
    /// RNR NAKs received.
    RnrNakReceived = "rnr-nak-received",
    /// Retries after an RNR wait.
    RetryRnr = "retry-rnr",
    /// Error NAKs (invalid request, remote access, remote operational) received.
    NakErrorReceived = "nak-error-received",
    /// Work requests completed with retry exceeded.
    RetryExceeded = "retry-exceeded",
    /// Work requests completed with RNR retry exceeded.
    RnrRetryExceeded = "rnr-retry-exceeded",
}

/// The counts of one QP.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    counts: alloc::vec::Vec<u64>,
}

impl Counters {
    /// Adds one to `c`.
    pub fn inc(&mut self, c: Counter) {
        let i = c as usize;
        if self.counts.len() <= i {
            self.counts.resize(Counter::ALL.len(), 0);
        }
        self.counts[i] += 1;
    }

    /// The count of `c`.
    pub fn get(&self, c: Counter) -> u64 {
        self.counts.get(c as usize).copied().unwrap_or(0)
    }

    /// Every non-zero counter with its count, in table order.
    pub fn nonzero(&self) -> impl Iterator<Item = (Counter, u64)> + '_ {
        Counter::ALL
            .iter()
            .map(|&c| (c, self.get(c)))
            .filter(|&(_, n)| n != 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_kebab_case() {
        for (i, a) in Counter::ALL.iter().enumerate() {
            assert_eq!(*a as usize, i);
            let n = a.name();
            assert!(
                n.bytes().all(|b| b.is_ascii_lowercase() || b == b'-'),
                "{n}"
            );
            for b in &Counter::ALL[i + 1..] {
                assert_ne!(n, b.name());
            }
        }
        let mut c = Counters::default();
        c.inc(Counter::CnpSent);
        c.inc(Counter::CnpSent);
        assert_eq!(c.get(Counter::CnpSent), 2);
        assert_eq!(c.get(Counter::AckSent), 0);
        assert_eq!(c.nonzero().count(), 1);
    }
}
