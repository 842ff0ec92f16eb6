//! The last step of every int8 convolution: an output channel's accumulator plus its bias,
//! requantized by the channel's multiplier and shift, offset and clamped. Kept apart from
//! the loops so that a row of channels cuts its biases, multipliers and shifts once
//! ([`Finish::row`]) instead of checking them for every output: on a Cortex-M4 those
//! checks and the per-tensor test around them had cost as much as the requantization.

use crate::bytes::{channel, i32_at, requantize};
use crate::params::{Conv, Range};

/// A call's requantization: what each output channel's accumulator becomes.
#[derive(Clone, Copy)]
pub(crate) struct Finish<'a> {
    /// The bias bytes (int32 per channel), if the call has a bias.
    bias: Option<&'a [u8]>,
    multipliers: &'a [i32],
    shifts: &'a [i32],
    offset: i32,
    range: Range,
}

impl<'a> Finish<'a> {
    /// The requantization of call `p` whose bias bytes are `bias`.
    pub(crate) fn new(p: &Conv<'a>, bias: &'a [u8]) -> Self {
        Finish {
            bias: p.bias.then_some(bias),
            multipliers: p.multipliers,
            shifts: p.shifts,
            offset: p.output_offset,
            range: p.activation,
        }
    }

    /// Output channel `oc`'s accumulator, finished.
    #[inline(always)]
    pub(crate) fn one(&self, oc: usize, acc: i32) -> u8 {
        let acc = match self.bias {
            Some(bias) => acc.wrapping_add(i32_at(bias, oc)),
            None => acc,
        };
        let (m, s) = (channel(self.multipliers, oc), channel(self.shifts, oc));
        requantize(acc, m, s, self.offset, self.range)
    }

    /// The accumulators of channels `g..g + acc.len()`, finished, output `k` of them
    /// stored by `put`: the same bytes as [`one`](Self::one) on each. Where the lists are
    /// per channel, each is cut once for the row and walked beside the accumulators, so
    /// the loop has no bounds checks and no per-tensor test in it.
    #[inline(always)]
    pub(crate) fn row(&self, g: usize, acc: &[i32], put: &mut impl FnMut(usize, u8)) {
        let n = acc.len();
        let lists = (self.multipliers.get(g..g + n), self.shifts.get(g..g + n));
        let (offset, range) = (self.offset, self.range);
        match (lists, self.bias.map(|b| b.get(4 * g..4 * (g + n)))) {
            ((Some(m), Some(s)), Some(Some(bias))) => {
                let each = acc.iter().zip(m).zip(s).zip(bias.chunks_exact(4));
                for (k, (((&a, &m), &s), b)) in each.enumerate() {
                    let a = a.wrapping_add(i32::from_le_bytes([b[0], b[1], b[2], b[3]]));
                    put(k, requantize(a, m, s, offset, range));
                }
            }
            ((Some(m), Some(s)), None) => {
                for (k, ((&a, &m), &s)) in acc.iter().zip(m).zip(s).enumerate() {
                    put(k, requantize(a, m, s, offset, range));
                }
            }
            _ => {
                for (k, &a) in acc.iter().enumerate() {
                    put(k, self.one(g + k, a));
                }
            }
        }
    }
}
