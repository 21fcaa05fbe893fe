//! `Frame::parse` on arbitrary bytes: it must never panic, and whatever it
//! accepts must re-emit to a frame that parses to the same headers and
//! payload (reserved bits are not kept, so bytes may differ there).
#![no_main]

use libfuzzer_sys::fuzz_target;
use roce_wire::Frame;

fuzz_target!(|data: &[u8]| {
    if let Ok(f) = Frame::parse(data) {
        let out = f.repr.to_bytes(f.payload).expect("an accepted frame re-emits");
        let g = Frame::parse(&out).expect("a re-emitted frame parses");
        assert_eq!(g.repr, f.repr);
        assert_eq!(g.payload, f.payload);
    }
});
