//! Golden files: the generated module, linker fragment and report for the fixtures'
//! `usmp.toml`s, byte for byte. After an intended change, regenerate them with
//! `USMP_BLESS=1 cargo test -p usmp-build --test golden` and review the diff.
#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::path::{Path, PathBuf};

use usmp_build::{Config, LINKER_FILE, MODULE_FILE, REPORT_FILE};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

fn generate(fixture: &str, into: &str) -> PathBuf {
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("golden")
        .join(into);
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).unwrap();
    // Relative, as a build script names it, so no machine's path reaches the output.
    let manifest = Path::new(ROOT)
        .join("fixtures")
        .join(fixture)
        .join("usmp.toml");
    let cwd = std::env::current_dir().unwrap();
    let relative = pathdiff(&manifest, &cwd);
    Config::from_file(relative)
        .out_dir(&out)
        .cargo_directives(false)
        .generate()
        .unwrap();
    out
}

/// `path` relative to `base` (both absolute, `base` a prefix of neither necessarily).
fn pathdiff(path: &Path, base: &Path) -> PathBuf {
    let path = path.canonicalize().unwrap();
    let base = base.canonicalize().unwrap();
    let common = path
        .components()
        .zip(base.components())
        .take_while(|(a, b)| a == b)
        .count();
    let mut out = PathBuf::new();
    for _ in base.components().skip(common) {
        out.push("..");
    }
    for c in path.components().skip(common) {
        out.push(c);
    }
    out
}

fn check(fixture: &str) {
    let out = generate(fixture, fixture);
    let golden = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(fixture);
    let bless = std::env::var_os("USMP_BLESS").is_some();
    for file in [MODULE_FILE, LINKER_FILE, REPORT_FILE] {
        let got = std::fs::read_to_string(out.join(file)).unwrap();
        if file == MODULE_FILE {
            // Laid out as rustfmt would: no line past 100 characters.
            let long = got.lines().find(|l| l.chars().count() > 100);
            assert_eq!(
                long, None,
                "{fixture}/{file} has a line over 100 characters"
            );
        }
        let want_path = golden.join(file);
        if bless {
            std::fs::create_dir_all(&golden).unwrap();
            std::fs::write(&want_path, &got).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&want_path).unwrap_or_else(|e| {
            panic!(
                "{}: {e}; run with USMP_BLESS=1 to create it",
                want_path.display()
            )
        });
        if got != want {
            let line = got
                .lines()
                .zip(want.lines())
                .position(|(a, b)| a != b)
                .map_or(got.lines().count().min(want.lines().count()), |l| l);
            panic!(
                "{fixture}/{file} differs from its golden file from line {}:\n  got:  {:?}\n  want: {:?}\nrun with USMP_BLESS=1 after an intended change",
                line + 1,
                got.lines().nth(line),
                want.lines().nth(line)
            );
        }
    }
}

#[test]
fn kws_module_linker_fragment_and_report() {
    check("kws");
}

#[test]
fn two_models_sharing_a_workspace() {
    check("two-models");
}

#[test]
fn generation_is_byte_identical_across_runs() {
    let a = generate("two-models", "repeat-a");
    let b = generate("two-models", "repeat-b");
    for file in std::fs::read_dir(&a).unwrap() {
        let name = file.unwrap().file_name();
        let x = std::fs::read(a.join(&name)).unwrap();
        let y = std::fs::read(b.join(&name)).unwrap();
        assert!(
            x == y,
            "{} differs between two runs",
            name.to_string_lossy()
        );
    }
}

#[test]
fn constant_images_hold_the_model_bytes() {
    let out = generate("kws", "image");
    let image = std::fs::read(out.join("kws.flash.bin")).unwrap();
    let weights = std::fs::read(Path::new(ROOT).join("examples/models/conv_w.bin")).unwrap();
    // The generated module's placements, read back from its text.
    let module = std::fs::read_to_string(out.join(MODULE_FILE)).unwrap();
    let offset = |name: &str| -> usize {
        let line = module
            .lines()
            .find(|l| l.contains(&format!("pub const {name}: Buffer")))
            .unwrap();
        // `Buffer::new(pool, offset, size, start, end)`
        let args = line.split('(').nth(1).unwrap();
        args.split(", ").nth(1).unwrap().parse().unwrap()
    };
    let w = offset("CONV_W");
    assert_eq!(&image[w..w + weights.len()], &weights[..]);
    let f = offset("FC_W");
    assert_eq!(&image[f..f + 480], &weights[128..608]);
    let b = offset("BIAS");
    assert_eq!(&image[b..b + 8], &[1, 0, 255, 7, 3, 3, 9, 12]);
}
