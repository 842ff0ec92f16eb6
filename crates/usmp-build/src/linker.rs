//! `usmp.x` (and `usmp_pools.x`, the same for `usmp_pools!`): the linker fragment that
//! puts each pool's section into its memory region.
//!
//! With cortex-m-rt it is passed after `link.x` (`-Tlink.x -Tusmp.x`): it only adds
//! sections, `INSERT`ed among the runtime's own, so it works with the one `memory.x` the
//! runtime includes.
//!
//! Where they go matters. cortex-m-rt computes `__ebss` (the end of what its reset
//! handler zeroes) and `_stack_end` from the location counter right after `.bss` and
//! `.uninit`, and invites `INSERT AFTER .bss` only for sections that stay in `RAM` and
//! want zeroing. A workspace pool wants neither and may live in another region (DTCM at
//! an address below `RAM`, say): inserted after `.bss`, it would move `__ebss` into that
//! region, and the zeroing loop would run from `.bss` to the end of the address space.
//! So workspace pools go *before* `.bss`: each output section names its region, so
//! `.bss` still starts at `RAM`'s next free byte and `__ebss` stays the end of `.bss`.
//! Constant pools go after `.rodata`, whose only follower, `.data`, takes its load
//! address from `FLASH`'s own counter (`AT>FLASH`).

use std::fmt::Write;

use usmp_core::PoolKind;

use crate::outputs::{Embed, LINKER_FILE};
use crate::planned::{Planned, PlannedPool};
use crate::spec::image_section;

/// The fragment's file name for each front end: `usmp.x` from usmp-build in `build.rs`,
/// `usmp_pools.x` from `usmp_pools!` while the crate compiles. Two names, so that a crate
/// using both never links one's pools with the other's fragment.
pub fn file_name(embed: &Embed) -> &'static str {
    match embed {
        Embed::OutDir => LINKER_FILE,
        Embed::Inline => "usmp_pools.x",
    }
}

/// A symbol only the fragment defines and the generated code refers to (when a pool has a
/// region): a link without `-T<file>` fails with "undefined symbol" and this name, which
/// says what to do, instead of leaving the pools wherever the default script puts them.
pub(crate) fn linked_symbol(embed: &Embed) -> &'static str {
    match embed {
        Embed::OutDir => "__usmp_x_not_linked__pass_link_arg_Tusmp_x",
        Embed::Inline => "__usmp_pools_x_not_linked__pass_link_arg_Tusmp_pools_x",
    }
}

/// The symbol the fragment defines at the start of `pool`'s section. The generated code
/// refers to it too, so a fragment that does not place this pool (stale, or another
/// invocation's `usmp_pools.x` written over this one's) fails the link naming it.
pub(crate) fn start_symbol(pool: &str) -> String {
    format!("__susmp_{}", pool.to_ascii_lowercase())
}

/// What a firmware build is told about a pool without a region (usmp-build as a cargo
/// warning, `usmp_pools!` as a warning at the pool's name): nothing places its section, so
/// the linker puts it after the runtime's sections as an orphan, in whatever memory
/// follows (with cortex-m-rt, usually FLASH).
pub fn unplaced_warning(pool: &str, section: &str, embed: &Embed) -> String {
    let (front, whereto) = match embed {
        Embed::OutDir => ("usmp", " in usmp.toml"),
        Embed::Inline => ("usmp_pools!", ""),
    };
    format!(
        "{front}: pool `{pool}` has no `region`, so {file} does not place its section `{section}` on this bare-metal target: the linker will put it as an orphan section wherever the last memory region ends (often FLASH, where a workspace cannot be written); add `region = \"RAM\"` (a region of memory.x's MEMORY) to the pool{whereto}",
        file = file_name(embed),
    )
}

/// Whether the generated code needs the fragment: some pool names a region.
pub(crate) fn needs_fragment(planned: &Planned) -> bool {
    planned.pools.iter().any(|p| p.region.is_some())
}

/// The bytes the pool's section must hold: its statics, each padded to the alignment.
fn section_bytes(pool: &PlannedPool) -> u64 {
    pool.size.next_multiple_of(pool.start_alignment.max(1))
}

/// One output section of the fragment: where it goes and what it holds.
struct Placement<'a> {
    section: String,
    /// The input sections it gathers (`KEEP(*(patterns))`).
    patterns: String,
    noload: &'static str,
    region: &'a str,
    insert: &'static str,
    start: String,
    end: String,
    /// The guard symbol's definition, in the first section placed.
    define: String,
    /// What it holds, for the messages: `pool sram`.
    what: String,
}

impl Placement<'_> {
    /// The section, then `ASSERT`s that it fits its region and holds exactly `bytes`.
    fn write(&self, out: &mut String, pool: &PlannedPool, file: &str, bytes: u64) {
        let Placement {
            section: s,
            patterns,
            noload,
            region,
            insert,
            start,
            end,
            define,
            what,
        } = self;
        let _ = writeln!(
            out,
            "
SECTIONS
{{
  {s}{noload} : ALIGN({align})
  {{{define}
    {start} = .;
    KEEP(*({patterns}));
    {end} = .;
  }} > {region} /* \"memory region not defined\" here: pass -T{file} after -Tlink.x (which includes memory.x), or declare {region} in memory.x */
}}
INSERT {insert};

/* The linker's own \"overflowed by N bytes\" line above this message says by how much. */
ASSERT({end} <= ORIGIN({region}) + LENGTH({region}), \"ERROR(usmp): {what} ({size} bytes) overflows memory region {region}; enlarge {region} in memory.x, give the pool a smaller `size` limit so it plans into the next pool, or move it to a larger region\"); /* \"memory region not defined\" on this line: pass -T{file} after -Tlink.x (which includes memory.x), or declare {region} in memory.x */
/* Exactly the generated statics in the section: short when rustc left them out or
   this fragment is linked twice; long when other data is in it (it would shift them). */
ASSERT({end} - {start} >= {bytes}, \"ERROR(usmp): section {s} holds less than the {bytes} bytes planned for {what}: rustc leaves out the statics of a model the firmware never uses (run it, e.g. with invoke(), or remove it from usmp.toml), or -T{file} is passed to the linker twice (pass it once), or {file} comes from another build than the generated module\");
ASSERT({end} - {start} <= {bytes}, \"ERROR(usmp): section {s} holds more than the {bytes} bytes planned for {what}: other data is in that section, which would shift the pool; put nothing else in it, or {file} comes from another build than the generated module\");",
            align = pool.start_alignment,
            size = pool.size,
        );
    }
}

/// The fragment for `planned`, to be written as [`file_name`]`(embed)`. Pools without a
/// region are left to the default linker script (host builds) and only listed in a comment.
pub fn fragment(planned: &Planned, embed: &Embed) -> String {
    let mut out = format!(
        "/* @generated by usmp-build {}. Do not edit.

   Pass it to the linker after the runtime's script, e.g. in .cargo/config.toml:
     rustflags = [\"-C\", \"link-arg=-Tlink.x\", \"-C\", \"link-arg=-T{file}\"]
   and let build.rs add OUT_DIR to the search path:
     println!(\"cargo::rustc-link-search={{}}\", out_dir.display());

   Conventions (as cortex-m-rt's link.x):
   - each pool is one output section, named as the pool's `section`, in the pool's region;
   - __susmp_<pool> / __eusmp_<pool>: the start and end of that section;
   - {guard}: defined only here, referred to by the generated code, so
     a link without this file fails naming it;
   - ASSERT messages that start with ERROR(usmp) are yours to fix, and say how;
     BUG(usmp) means usmp made a wrong file: please report it with this file attached. */
",
        env!("CARGO_PKG_VERSION"),
        file = file_name(embed),
        guard = linked_symbol(embed),
    );
    let mut symbol = needs_fragment(planned).then(|| linked_symbol(embed));
    for pool in &planned.pools {
        let Some(region) = &pool.region else {
            let _ = writeln!(
                out,
                "\n/* pool {} ({} bytes, section {}): no region given, left to the default script. */",
                pool.name, pool.size, pool.section
            );
            continue;
        };
        let define = symbol
            .take()
            .map(|l| format!("\n    {l} = .;"))
            .unwrap_or_default();
        placed(&mut out, pool, region, define, file_name(embed));
    }
    out
}

/// Pool `pool`'s sections in `region` (with `define`, the guard's definition, in the first)
/// and their `ASSERT`s; for a pool run from RAM, its images' section in the load region
/// first.
fn placed(out: &mut String, pool: &PlannedPool, region: &str, define: String, file: &str) {
    let sym = pool.name.to_ascii_lowercase();
    let bytes = section_bytes(pool);
    let run = match (&pool.load, pool.kind) {
        (Some(load), _) => {
            let _ = write!(
                out,
                "
/* constant pool {name}: {size} bytes, planned, run from {region}. Its images are stored
   in {load} (section {image}) and copied into {region} by Workspace::take, not at reset
   as cortex-m-rt copies .data (`AT>`): the copy is storage of the generated code's own,
   so Rust never takes RAM to hold bytes before they are copied, and host builds copy
   the same way. The run section is NOLOAD: nothing else fills it. */",
                name = pool.name,
                size = pool.size,
                image = image_section(&pool.section),
            );
            let image = Placement {
                section: image_section(&pool.section),
                patterns: image_section(&pool.section),
                noload: "",
                region: load,
                insert: "AFTER .rodata",
                start: format!("__liusmp_{sym}"),
                end: format!("__leusmp_{sym}"),
                define: String::new(),
                what: format!("the image of pool {}", pool.name),
            };
            image.write(out, pool, file, bytes);
            // Only the section itself: `{s}.*` would take the images too.
            (" (NOLOAD)", "BEFORE .bss", pool.section.clone())
        }
        // NOLOAD: the workspace needs no image in flash and no start-up copy or zeroing.
        (None, PoolKind::Workspace) => {
            let _ = write!(
                out,
                "\n/* workspace pool {}: {} bytes, planned. */",
                pool.name, pool.size
            );
            (
                " (NOLOAD)",
                "BEFORE .bss",
                format!("{0} {0}.*", pool.section),
            )
        }
        (None, PoolKind::Constant) => {
            let _ = write!(
                out,
                "\n/* constant pool {}: {} bytes, planned. */",
                pool.name, pool.size
            );
            ("", "AFTER .rodata", format!("{0} {0}.*", pool.section))
        }
    };
    let (noload, insert, patterns) = run;
    Placement {
        section: pool.section.clone(),
        patterns,
        noload,
        region,
        insert,
        start: start_symbol(&pool.name),
        end: format!("__eusmp_{sym}"),
        define,
        what: format!("pool {}", pool.name),
    }
    .write(out, pool, file, bytes);
    let _ = writeln!(
        out,
        "ASSERT({start} % {align} == 0, \"BUG(usmp): pool {name} starts at an address that is not a multiple of its alignment {align}, though its section is aligned so\");",
        start = start_symbol(&pool.name),
        name = pool.name,
        align = pool.start_alignment,
    );
}
