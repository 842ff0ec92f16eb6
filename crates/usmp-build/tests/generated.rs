//! If the build accepts it, it compiles and runs: random small models (reads of one tensor
//! twice, in-place calls, state, scratch, constants, alignments) over random pool sets are
//! planned by `usmp_build::build()` in scratch crates, compiled for the host, and run. The
//! run fills every region a call writes with a pattern unique to its buffer, checks that
//! every region a call reads still holds its buffer's pattern (after poisoning every dead
//! buffer between calls), that the regions of each call are disjoint, and that each
//! model's state survives the other models running in the same workspace.
#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Scratch crates, each with its own pool set and models sharing its workspace.
const CRATES: u64 = 4;
/// Models per crate.
const MODELS: usize = 60;
/// The algorithms the models are planned with.
const ALGORITHMS: &[&str] = &[
    "greedy_by_size",
    "greedy_by_conflicts",
    "first_fit",
    "best_fit",
    "greedy_by_breadth",
    "auto",
];

/// splitmix64: a fixed-seed generator, so every run tests the same models.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn chance(&mut self, one_in: u64) -> bool {
        self.below(one_in) == 0
    }
}

struct Call {
    reads: Vec<usize>,
    writes: Vec<usize>,
    scratch: Option<(u64, u64)>,
    in_place: Vec<(usize, usize)>,
}

/// A random model in usmp's JSON IR.
fn model(rng: &mut Rng) -> String {
    // (name, kind, size, alignment)
    let mut tensors: Vec<(String, &str, u64, Option<u64>)> = Vec::new();
    let add = |tensors: &mut Vec<(String, &str, u64, Option<u64>)>, kind, rng: &mut Rng| {
        let size = 1 + rng.below(200);
        let alignment = rng.chance(3).then(|| 1 << rng.below(6));
        tensors.push((format!("t{}", tensors.len()), kind, size, alignment));
        tensors.len() - 1
    };
    let inputs: Vec<usize> = (0..1 + rng.below(2))
        .map(|_| add(&mut tensors, "activation", rng))
        .collect();
    let state = rng.chance(3).then(|| add(&mut tensors, "state", rng));
    let mut alive = inputs.clone();
    let mut calls: Vec<Call> = Vec::new();
    let n = 1 + rng.below(8) as usize;
    for _ in 0..n {
        let mut reads: Vec<usize> = (0..1 + rng.below(3))
            .map(|_| alive[rng.below(alive.len() as u64) as usize])
            .collect();
        if rng.chance(3) {
            reads.push(add(&mut tensors, "constant", rng));
        }
        let mut writes: Vec<usize> = (0..1 + rng.below(2))
            .map(|_| add(&mut tensors, "activation", rng))
            .collect();
        alive.extend(writes.iter().copied());
        if let Some(s) = state
            && (calls.is_empty() || rng.chance(4))
        {
            reads.push(s);
            writes.push(s);
        }
        let scratch = rng
            .chance(3)
            .then(|| (1 + rng.below(100), 1 << rng.below(5)));
        calls.push(Call {
            reads,
            writes,
            scratch,
            in_place: Vec::new(),
        });
    }
    let last_call = calls.len() - 1;
    let mut outputs = calls[last_call].writes.clone();
    outputs.retain(|&t| Some(t) != state);
    outputs.truncate(1);
    if outputs.is_empty() {
        outputs.push(alive[alive.len() - 1]);
    }
    // In place where the rules allow: an activation input read last here, not model I/O,
    // into an activation output of this call that is not a model output; each once.
    let mut last = vec![None; tensors.len()];
    for (i, c) in calls.iter().enumerate() {
        for &t in &c.reads {
            last[t] = Some(i);
        }
    }
    let mut reused = vec![false; tensors.len()];
    for (i, c) in calls.iter_mut().enumerate() {
        for &o in &c.writes {
            let candidates: Vec<usize> = c
                .reads
                .iter()
                .copied()
                .filter(|&t| {
                    tensors[t].1 == "activation"
                        && last[t] == Some(i)
                        && !inputs.contains(&t)
                        && !outputs.contains(&t)
                        && !reused[t]
                })
                .collect();
            if tensors[o].1 == "activation"
                && !outputs.contains(&o)
                && !candidates.is_empty()
                && rng.chance(2)
            {
                let t = candidates[0];
                reused[t] = true;
                c.in_place.push((o, t));
            }
        }
    }

    let mut json = String::from("{\"tensors\": [");
    for (k, (name, kind, size, alignment)) in tensors.iter().enumerate() {
        let sep = if k > 0 { ", " } else { "" };
        let align = alignment.map_or(String::new(), |a| format!(", \"alignment\": {a}"));
        let body = match *kind {
            "constant" => {
                let data: Vec<String> = (0..*size)
                    .map(|j| ((j * 7 + k as u64) % 256).to_string())
                    .collect();
                format!("\"kind\": \"constant\", \"data\": [{}]", data.join(", "))
            }
            "state" => format!("\"kind\": \"state\", \"size_bytes\": {size}{align}"),
            _ => format!("\"size_bytes\": {size}{align}"),
        };
        let _ = write!(json, "{sep}{{\"name\": \"{name}\", {body}}}");
    }
    let names = |ts: &[usize]| -> String {
        ts.iter()
            .map(|&t| format!("\"{}\"", tensors[t].0))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let _ = write!(
        json,
        "], \"inputs\": [{}], \"outputs\": [{}], \"calls\": [",
        names(&inputs),
        names(&outputs)
    );
    for (i, c) in calls.iter().enumerate() {
        let sep = if i > 0 { ", " } else { "" };
        let scratch = c.scratch.map_or(String::new(), |(size, align)| {
            format!(", \"scratch\": [{{\"name\": \"tmp\", \"size_bytes\": {size}, \"alignment\": {align}}}]")
        });
        let in_place: Vec<String> = c
            .in_place
            .iter()
            .map(|&(o, t)| {
                format!(
                    "{{\"output\": \"{}\", \"input\": \"{}\"}}",
                    tensors[o].0, tensors[t].0
                )
            })
            .collect();
        let in_place = if in_place.is_empty() {
            String::new()
        } else {
            format!(", \"in_place\": [{}]", in_place.join(", "))
        };
        let _ = write!(
            json,
            "{sep}{{\"op\": \"op{i}\", \"reads\": [{}], \"writes\": [{}]{scratch}{in_place}}}",
            names(&c.reads),
            names(&c.writes)
        );
    }
    json.push_str("]}");
    json
}

/// A random pool set: one to three workspace pools (the first perhaps limited, the last
/// never, so every model fits) and a constant pool (last, so a `load` may follow).
fn pools(rng: &mut Rng) -> String {
    let mut toml = String::new();
    let n = 1 + rng.below(3);
    for p in 0..n {
        let _ = write!(
            toml,
            "[[pool]]\nname = \"w{p}\"\nalignment = {}\n",
            1 << rng.below(6)
        );
        if p + 1 < n && rng.chance(2) {
            let _ = writeln!(toml, "size = {}", 64 + rng.below(512));
        }
        toml.push('\n');
    }
    let _ = write!(
        toml,
        "[[pool]]\nname = \"rom\"\nkind = \"constant\"\nalignment = {}\n",
        1 << rng.below(4)
    );
    toml
}

/// The checker every scratch crate runs, generic over the models it planned.
const CHECKER: &str = r#"
#![allow(clippy::all)]
#![cfg_attr(not(test), allow(dead_code))]
pub mod usmp {
    include!(concat!(env!("OUT_DIR"), "/usmp.rs"));
}

use ::usmp::{Model, PoolKind, Source};

/// Byte `j` of buffer `b` of the model called `name` in this test's pattern: never 0
/// (fresh) nor 0xA5 (poison), and different for each model's buffers.
fn pattern(name: &str, b: u32, j: usize) -> u8 {
    let salt = name.bytes().fold(0usize, |h, c| h.wrapping_mul(31).wrapping_add(c as usize));
    ((salt.wrapping_mul(17).wrapping_add(b as usize * 31).wrapping_add(j * 7)) % 150) as u8 + 1
}

fn holds(name: &str, bytes: &[u8], b: u32) -> bool {
    bytes.iter().enumerate().all(|(j, &x)| x == pattern(name, b, j))
}

fn fill(name: &str, bytes: &mut [u8], b: u32) {
    for (j, x) in bytes.iter_mut().enumerate() {
        *x = pattern(name, b, j);
    }
}

fn range(s: &[u8]) -> (usize, usize) {
    (s.as_ptr() as usize, s.as_ptr() as usize + s.len())
}

fn disjoint(ranges: &[(usize, usize)], what: &str) {
    for (i, a) in ranges.iter().enumerate() {
        for b in &ranges[i + 1..] {
            assert!(a.1 <= b.0 || b.1 <= a.0 || a.0 == a.1 || b.0 == b.1, "{what}: {a:?} overlaps {b:?}");
        }
    }
}

/// One inference with patterns and poison; returns nothing, panics on any fault.
fn run<M: Model<Pools = usmp::Pools>>(ws: &mut usmp::Workspace) {
    let info = M::INFO;
    let workspace = |b: u32| usmp::POOLS[info.buffers[b as usize].pool].kind == PoolKind::Workspace;
    let mut s = ::usmp::Session::<M>::new(ws);
    s.poison_all(0xA5);
    let mut written = vec![false; info.buffers.len()];
    // State keeps what an earlier inference wrote.
    for (b, buffer) in info.buffers.iter().enumerate() {
        written[b] = buffer.persistent && STATE_WRITTEN.with(|w| w.borrow().contains(&(info.name, b)));
    }
    for (k, slot) in info.inputs.iter().enumerate() {
        if let (Source::Buffer(b), Some(bytes)) = (slot.source, s.input(k)) {
            fill(info.name, bytes, b);
            written[b as usize] = true;
        }
    }
    for i in 0..s.calls() {
        let call_info = &info.calls[i];
        {
            let mut call = s.call(i).unwrap();
            let mut reads = Vec::new();
            for k in 0..call.inputs.len() {
                if let (Some(Source::Buffer(b)), Some(bytes)) = (call.inputs.source(k), call.inputs.get(k)) {
                    if !workspace(b) {
                        // A constant: its image's bytes, read from the copy taking the
                        // workspace made where its pool runs from RAM, in place otherwise.
                        let image = M::constant(&info.buffers[b as usize]);
                        assert_eq!(bytes, image, "{} call {i}: constant input {k} (buffer {b}) is not its image", info.name);
                        let loaded = usmp::POOLS[info.buffers[b as usize].pool].loaded;
                        if !bytes.is_empty() {
                            assert_eq!(bytes.as_ptr() != image.as_ptr(), loaded, "{} call {i}: constant input {k} (buffer {b}) read from the wrong place", info.name);
                        }
                    } else {
                        reads.push(range(bytes));
                        // Only state may be read before anything wrote it (its first run).
                        assert!(written[b as usize] || info.buffers[b as usize].persistent, "{} call {i}: input {k} (buffer {b}) read before written", info.name);
                        if written[b as usize] {
                            assert!(holds(info.name, bytes, b), "{} call {i}: input {k} (buffer {b}) lost its bytes", info.name);
                        }
                    }
                }
            }
            let mut writes = Vec::new();
            for (o, slot) in call_info.outputs.iter().enumerate() {
                if let (Source::Buffer(b), Some(bytes)) = (slot.source, call.outputs.get_mut(o)) {
                    let in_place = call_info.inputs.iter().any(|s| s.source == Source::InPlace(o as u32));
                    if in_place && written[b as usize] {
                        assert!(holds(info.name, bytes, b), "{} call {i}: in-place output {o} lost its input", info.name);
                    }
                    writes.push(range(bytes));
                    fill(info.name, bytes, b);
                    written[b as usize] = true;
                }
            }
            for (k, &b) in call_info.scratch.iter().enumerate() {
                let bytes = call.scratch.get_mut(k).unwrap();
                writes.push(range(bytes));
                fill(info.name, bytes, b);
            }
            disjoint(&writes, "writable regions");
            // Reads may repeat (one tensor read twice); each must miss every write.
            for r in &reads {
                for w in &writes {
                    assert!(r.1 <= w.0 || w.1 <= r.0 || r.0 == r.1 || w.0 == w.1, "{} call {i}: read {r:?} overlaps write {w:?}", info.name);
                }
            }
        }
        s.poison_dead(i, 0xA5);
    }
    for (k, slot) in info.outputs.iter().enumerate() {
        if let (Source::Buffer(b), Some(bytes)) = (slot.source, s.output(k)) {
            if written[b as usize] {
                assert!(holds(info.name, bytes, b), "{}: output {k} lost its bytes", info.name);
            }
        }
    }
    for (b, buffer) in info.buffers.iter().enumerate() {
        if buffer.persistent && written[b] {
            STATE_WRITTEN.with(|w| w.borrow_mut().push((info.name, b)));
        }
    }
}

std::thread_local! {
    static STATE_WRITTEN: std::cell::RefCell<Vec<(&'static str, usize)>> = const { std::cell::RefCell::new(Vec::new()) };
}
"#;

fn cargo(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO"))
        .args(args)
        .current_dir(dir)
        .env(
            "CARGO_TARGET_DIR",
            PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("generated"),
        )
        .env_remove("RUSTFLAGS")
        .output()
        .unwrap()
}

#[test]
fn random_accepted_models_compile_and_run_soundly() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let root = root.canonicalize().unwrap();
    let mut ran = 0;
    for c in 0..CRATES {
        let mut rng = Rng(0x5eed_0000 + c);
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("generated-{c}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::create_dir_all(dir.join("models")).unwrap();
        let mut toml = pools(&mut rng);
        if c % 2 == 1 {
            // The constants run from RAM, copied in when the workspace is taken. (On the
            // host the regions only name the fragment's placement; nothing links it.)
            toml.push_str("region = \"DTCM\"\nload = \"FLASH\"\n");
        }
        let mut lib = String::from(CHECKER);
        lib.push_str(
            "\n#[test]\nfn every_model() {\n    let mut ws = usmp::Workspace::take().unwrap();\n",
        );
        for m in 0..MODELS {
            std::fs::write(dir.join(format!("models/m{m}.json")), model(&mut rng)).unwrap();
            // Every algorithm; `auto` (the default, whose work budget dominates the run
            // time) for one model in six. One model in three runs its calls in the order
            // of the lowest peak, which the checker's reads-after-writes must survive.
            let algorithm = ALGORITHMS[rng.below(ALGORITHMS.len() as u64) as usize];
            let order = if m % 3 == 1 { "memory" } else { "written" };
            let _ = write!(
                toml,
                "\n[[model]]\nname = \"m{m}\"\npath = \"models/m{m}.json\"\nalgorithm = \"{algorithm}\"\norder = \"{order}\"\n"
            );
            let _ = writeln!(lib, "    run::<usmp::m{m}::Model>(&mut ws);");
        }
        // Again: every model's state must have survived all the others.
        for m in 0..MODELS {
            let _ = writeln!(lib, "    run::<usmp::m{m}::Model>(&mut ws);");
        }
        lib.push_str("}\n");
        std::fs::write(dir.join("usmp.toml"), toml).unwrap();
        std::fs::write(dir.join("src/lib.rs"), lib).unwrap();
        std::fs::write(
            dir.join("build.rs"),
            "fn main() {\n    usmp_build::build();\n}\n",
        )
        .unwrap();
        let manifest = format!(
            "[package]\nname = \"generated-{c}\"\nversion = \"0.0.0\"\nedition = \"2024\"\n\n\
             [dependencies]\nusmp = {{ path = {:?} }}\n\n\
             [build-dependencies]\nusmp-build = {{ path = {:?} }}\n\n[workspace]\n",
            root.join("crates/usmp").display().to_string(),
            root.join("crates/usmp-build").display().to_string(),
        );
        std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
        std::fs::copy(root.join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
        let out = cargo(&dir, &["test", "--quiet"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "crate {c} ({}):\n{stderr}\n{stdout}",
            dir.display()
        );
        assert!(!stderr.contains("warning"), "crate {c}:\n{stderr}");
        ran += MODELS;
    }
    assert_eq!(ran, CRATES as usize * MODELS);
}
