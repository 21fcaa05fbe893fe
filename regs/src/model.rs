//! The shape of the register map: blocks of 32-bit registers, registers of
//! fields. Everything is `const` so firmware, generators and (later) the
//! hardware CSR decoder read the same table.

/// Who may do what to a register over the CSR bus.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Read only; writes are ignored.
    RO,
    /// Read and write; a read returns the last value written.
    RW,
    /// Read; writing a 1 to a bit clears it.
    W1C,
    /// Write only; reads return 0.
    WO,
}

impl Access {
    /// Short name as in data sheets (`RO`, `RW`, `W1C`, `WO`).
    pub const fn name(self) -> &'static str {
        match self {
            Access::RO => "RO",
            Access::RW => "RW",
            Access::W1C => "W1C",
            Access::WO => "WO",
        }
    }
}

/// A bit field of a register (names in UPPER case).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    pub name: &'static str,
    /// Least significant bit.
    pub lsb: u8,
    /// Width in bits, 1..=32.
    pub width: u8,
    /// Value after reset (unshifted).
    pub reset: u32,
    pub doc: &'static str,
}

impl Field {
    /// The largest value the field holds (unshifted mask).
    pub const fn max(self) -> u32 {
        if self.width >= 32 {
            u32::MAX
        } else {
            (1u32 << self.width) - 1
        }
    }

    /// The field's bits in the register word.
    pub const fn mask(self) -> u32 {
        self.max() << self.lsb
    }

    /// The field's value in `word`.
    pub const fn get(self, word: u32) -> u32 {
        (word >> self.lsb) & self.max()
    }

    /// `word` with the field replaced by `value` (bits of `value` beyond the
    /// field's width are dropped).
    pub const fn set(self, word: u32, value: u32) -> u32 {
        (word & !self.mask()) | ((value & self.max()) << self.lsb)
    }

    /// `value` placed in an otherwise zero word.
    pub const fn val(self, value: u32) -> u32 {
        self.set(0, value)
    }
}

/// A 32-bit register (name in lower case), or an array of them: element `i`
/// is at `offset + i * stride` in its block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Register {
    pub name: &'static str,
    /// Byte offset of element 0 from the block base; a multiple of 4.
    pub offset: u32,
    /// Number of elements (1 for a plain register).
    pub count: u32,
    /// Bytes between elements; 4 for a plain register.
    pub stride: u32,
    pub access: Access,
    pub fields: &'static [Field],
    pub doc: &'static str,
}

impl Register {
    /// The register's value after reset: every field at its reset value.
    pub const fn reset(self) -> u32 {
        let mut word = 0;
        let mut i = 0;
        while i < self.fields.len() {
            word |= self.fields[i].val(self.fields[i].reset);
            i += 1;
        }
        word
    }

    /// Every bit some field owns.
    pub const fn used_bits(self) -> u32 {
        let mut bits = 0;
        let mut i = 0;
        while i < self.fields.len() {
            bits |= self.fields[i].mask();
            i += 1;
        }
        bits
    }

    /// Byte offset of element `i` from the block base.
    pub const fn element_offset(self, i: u32) -> u32 {
        self.offset + i * self.stride
    }

    /// The field called `name`.
    pub fn field(&self, name: &str) -> Option<&'static Field> {
        self.fields.iter().find(|f| f.name == name)
    }
}

/// A block of registers at `base` in the CSR window, `size` bytes of address
/// space. Register 0 is always `id`: the block's type and version.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Block {
    pub name: &'static str,
    /// Byte offset of the block in the CSR window.
    pub base: u32,
    /// Bytes of address space the block decodes.
    pub size: u32,
    /// Block type, in `id.TYPE`.
    pub type_id: u16,
    /// Layout version, in `id.VERSION`.
    pub version: u16,
    pub registers: &'static [Register],
    pub doc: &'static str,
}

impl Block {
    /// The register called `name`.
    pub fn register(&self, name: &str) -> Option<&'static Register> {
        self.registers.iter().find(|r| r.name == name)
    }

    /// The value of the block's `id` word.
    pub const fn id_word(self) -> u32 {
        ((self.type_id as u32) << 16) | self.version as u32
    }
}

/// One named value of an enumerated field (states, result codes, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EnumValue {
    pub name: &'static str,
    pub value: u32,
    pub doc: &'static str,
}

/// The values a field (or a register index, for counters) takes. With
/// `flags`, values are single bits that combine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EnumDesc {
    pub name: &'static str,
    pub doc: &'static str,
    pub flags: bool,
    pub values: &'static [EnumValue],
}

/// Write `register_map!` block definitions (`LIST; block ...`; `LIST`
/// becomes the slice of the blocks defined): each block becomes a module with
/// `BASE`, `BLOCK` and one module per register holding `REG`, `ADDR`
/// (window offset of element 0), `addr(i)` and one `Field` const per field.
/// Register `id` (offset 0, RO, `TYPE[31:16]`, `VERSION[15:0]`) is added to
/// every block.
macro_rules! register_map {
    (
        $list:ident;
        $(
            $(#[doc = $bdoc:literal])*
            block $block:ident (base: $base:expr, size: $size:expr, type: $ty:expr, version: $ver:expr) {
                $(
                    $(#[doc = $rdoc:literal])*
                    $reg:ident ($off:expr $(, [$count:expr; $stride:expr])?) : $acc:ident {
                        $(
                            $(#[doc = $fdoc:literal])*
                            $field:ident [$lsb:expr, $width:expr] = $reset:expr
                        ),* $(,)?
                    }
                )*
            }
        )*
    ) => {
        $(
            $(#[doc = $bdoc])*
            pub mod $block {
                #[allow(unused_imports)]
                use super::*;
                use $crate::model::{Access, Block, Field, Register};

                /// Byte offset of the block in the CSR window.
                pub const BASE: u32 = $base;
                /// The block as data.
                pub const BLOCK: Block = Block {
                    name: stringify!($block),
                    base: $base,
                    size: $size,
                    type_id: $ty,
                    version: $ver,
                    registers: &[id::REG, $($reg::REG),*],
                    doc: concat!($($bdoc),*),
                };

                /// Block type and layout version.
                pub mod id {
                    use super::*;
                    /// Block type.
                    pub const TYPE: Field = Field { name: "TYPE", lsb: 16, width: 16, reset: $ty, doc: " Block type." };
                    /// Layout version.
                    pub const VERSION: Field = Field { name: "VERSION", lsb: 0, width: 16, reset: $ver, doc: " Layout version." };
                    /// The register as data.
                    pub const REG: Register = Register {
                        name: "id",
                        offset: 0,
                        count: 1,
                        stride: 4,
                        access: Access::RO,
                        fields: &[TYPE, VERSION],
                        doc: " Block type and layout version.",
                    };
                    /// Window offset.
                    pub const ADDR: u32 = BASE;
                }

                $(
                    $(#[doc = $rdoc])*
                    pub mod $reg {
                        #[allow(unused_imports)]
                        use super::*;
                        $(
                            $(#[doc = $fdoc])*
                            pub const $field: Field = Field {
                                name: stringify!($field),
                                lsb: $lsb,
                                width: $width,
                                reset: $reset,
                                doc: concat!($($fdoc),*),
                            };
                        )*
                        /// The register as data.
                        pub const REG: Register = Register {
                            name: stringify!($reg),
                            offset: $off,
                            count: register_map!(@or $($count)?; 1),
                            stride: register_map!(@or $($stride)?; 4),
                            access: Access::$acc,
                            fields: &[$($field),*],
                            doc: concat!($($rdoc),*),
                        };
                        /// Window offset of element 0.
                        pub const ADDR: u32 = super::BASE + $off;
                        /// Window offset of element `i`.
                        #[allow(dead_code)]
                        pub const fn addr(i: u32) -> u32 {
                            ADDR + i * REG.stride
                        }
                    }
                )*
            }
        )*

        /// The blocks of this invocation, in address order.
        pub const $list: &[$crate::model::Block] = &[$($block::BLOCK),*];
    };
    (@or ; $default:expr) => { $default };
    (@or $value:expr; $default:expr) => { $value };
}

/// Define a `#[repr(u32)]` enum of field values with its name table
/// (`ALL`, `name()`, `from_value()`) and its [`EnumDesc`] for generators.
macro_rules! value_enum {
    (
        $(#[doc = $doc:literal])*
        $name:ident ($label:literal, flags: $flags:literal) {
            $(
                $(#[doc = $vdoc:literal])*
                $var:ident = $val:expr => $vname:literal
            ),* $(,)?
        }
    ) => {
        $(#[doc = $doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[repr(u32)]
        pub enum $name {
            $( $(#[doc = $vdoc])* $var = $val, )*
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$var),*];
            /// The values as data, for generators.
            pub const DESC: $crate::model::EnumDesc = $crate::model::EnumDesc {
                name: $label,
                doc: concat!($($doc),*),
                flags: $flags,
                values: &[$($crate::model::EnumValue {
                    name: $vname,
                    value: $val,
                    doc: concat!($($vdoc),*),
                }),*],
            };

            /// The value as it sits in its field.
            pub const fn value(self) -> u32 {
                self as u32
            }

            /// Stable name (lower case, `-` separated).
            pub const fn name(self) -> &'static str {
                match self {
                    $($name::$var => $vname),*
                }
            }

            /// The variant whose value is `v`.
            pub const fn from_value(v: u32) -> Option<$name> {
                $(if v == $val {
                    return Some($name::$var);
                })*
                None
            }
        }
    };
}
