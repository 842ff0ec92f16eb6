//! Mistakes in the pools: names and sections declared twice, regions the memory.x beside
//! usmp.toml lacks or of the wrong kind of memory, a memory.x or usmp.toml that is not a
//! file.

use super::*;

#[test]
fn duplicate_pool_points_at_the_second() {
    let d = one(
        "duplicate_pool",
        &format!("{POOLS}\n[[pool]]\nname = \"sram\"\n{MODEL}"),
        "9:8",
        &[
            "pool `sram` is declared twice",
            "help: give each pool its own name",
        ],
    );
    assert!(d.contains("^^^^^^"), "{d}");
}

#[test]
fn two_pools_in_one_section_point_at_the_second() {
    one(
        "shared_section",
        &format!(
            "[[pool]]\nname = \"sram\"\nsection = \".pools\"\n\n[[pool]]\nname = \"dtcm\"\nsection = \".pools\"\n{MODEL}"
        ),
        "7:11",
        &[
            "pool `dtcm` uses section `.pools`, which an earlier pool uses too",
            "leave `section` out for \".usmp.dtcm\"",
        ],
    );
}

#[test]
fn a_region_memory_x_lacks_is_refused_at_its_token() {
    let memory_x = "MEMORY\n{\n  FLASH : ORIGIN = 0x0, LENGTH = 256K\n  RAM (rwx) : ORIGIN = 0x20000000, LENGTH = 64K\n  DTCM : ORIGIN = 0x20010000, LENGTH = 16K\n}\n";
    let toml = format!(
        "[[pool]]\nname = \"sram\"\nregion = \"DTMC\"\n\n[[pool]]\nname = \"flash\"\nkind = \"constant\"\nregion = \"FLASH\"\n{MODEL}"
    );
    let d = one_with(
        "region_not_in_memory_x",
        &toml,
        &[("memory.x", memory_x)],
        "3:10",
        &[
            "region `DTMC` is not declared in",
            "memory.x",
            "write one of its MEMORY regions: FLASH, RAM, DTCM",
        ],
    );
    assert!(d.contains("^^^^^^"), "{d}");
    // The same file with the region spelt right plans.
    // Spelt right, but DTCM states no attributes: RAM or flash cannot be told apart.
    one_with(
        "region_without_attributes",
        &toml.replace("DTMC", "DTCM"),
        &[("memory.x", memory_x)],
        "3:10",
        &[
            "region `DTCM` (",
            "memory.x:5) states no attributes",
            "write `DTCM (rwx) : ...` if DTCM is RAM",
        ],
    );
    // With its attributes the same file plans.
    let dir = setup(
        "region_in_memory_x",
        &toml.replace("DTMC", "DTCM"),
        &[("memory.x", &memory_x.replace("DTCM :", "DTCM (rw) :"))],
    );
    generates(&dir);
}

#[test]
fn a_pool_in_the_wrong_kind_of_memory_is_refused() {
    let memory_x = "MEMORY\n{\n  FLASH : ORIGIN = 0x0, LENGTH = 256K\n  RAM : ORIGIN = 0x20000000, LENGTH = 64K\n  QSPI (rx) : ORIGIN = 0x28000000, LENGTH = 8M\n  DTCM (rwx) : ORIGIN = 0x20010000, LENGTH = 16K\n}\n";
    let toml = |work: &str, constant: &str| {
        format!(
            "[[pool]]\nname = \"sram\"\nregion = \"{work}\"\n\n[[pool]]\nname = \"flash\"\nkind = \"constant\"\nregion = \"{constant}\"\n{MODEL}"
        )
    };
    // A workspace where the firmware cannot write: it would hang or fault.
    for (case, region, line) in [
        ("workspace_in_flash", "FLASH", 3),
        ("workspace_in_qspi", "QSPI", 5),
    ] {
        one_with(
            case,
            &toml(region, "FLASH"),
            &[("memory.x", memory_x)],
            "3:10",
            &[
                &format!("workspace pool `sram` is in region `{region}`, which"),
                &format!("memory.x:{line} declares read-only"),
                "put the pool in a writable region: RAM, DTCM",
            ],
        );
    }
    // Weights in RAM: QEMU loads them, a board does not.
    one_with(
        "constant_in_ram",
        &toml("RAM", "DTCM"),
        &[("memory.x", memory_x)],
        "8:10",
        &[
            "constant pool `flash` is in region `DTCM`, which",
            "memory.x:6 declares writable RAM",
            "programmed into: FLASH, QSPI",
        ],
    );
    // The right kinds plan.
    let dir = setup(
        "right_kinds",
        &toml("DTCM", "QSPI"),
        &[("memory.x", memory_x)],
    );
    generates(&dir);
}

#[test]
fn a_constant_pool_run_from_ram_needs_ram_to_run_from_and_flash_to_load_from() {
    let memory_x = "MEMORY\n{\n  FLASH : ORIGIN = 0x0, LENGTH = 256K\n  RAM : ORIGIN = 0x20000000, LENGTH = 64K\n  QSPI (rx) : ORIGIN = 0x28000000, LENGTH = 8M\n  DTCM (rwx) : ORIGIN = 0x20010000, LENGTH = 16K\n}\n";
    let toml = |region: &str, load: &str| {
        format!(
            "[[pool]]\nname = \"sram\"\nregion = \"RAM\"\n\n[[pool]]\nname = \"flash\"\nkind = \"constant\"\nregion = \"{region}\"\nload = \"{load}\"\n{MODEL}"
        )
    };
    let files = [("memory.x", memory_x)];
    for (case, region, load, at, words) in [
        (
            "load_from_ram",
            "DTCM",
            "RAM",
            "9:8",
            &[
                "loads its image from region `RAM`, which",
                "programmed into (FLASH, QSPI)",
            ][..],
        ),
        (
            "load_not_declared",
            "DTCM",
            "FLSH",
            "9:8",
            &[
                "region `FLSH` is not declared in",
                "write the region the image is stored in: FLASH, QSPI",
            ],
        ),
        (
            "run_from_flash",
            "QSPI",
            "FLASH",
            "8:10",
            &[
                "constant pool `flash` runs from region `QSPI` (it has a `load` region), but",
                "memory.x:5 declares it read-only",
                "run it from a writable region (RAM, DTCM)",
            ],
        ),
    ] {
        one_with(case, &toml(region, load), &files, at, words);
    }
    // Copied into where it is stored (without memory.x, which would also say DTCM is RAM).
    one(
        "load_into_itself",
        &toml("DTCM", "DTCM"),
        "9:8",
        &["would be copied from region `DTCM` into the same region"],
    );
    // Without a region to run from, or on a workspace pool, `load` means nothing.
    one_with(
        "load_without_region",
        &format!(
            "[[pool]]\nname = \"sram\"\n\n[[pool]]\nname = \"flash\"\nkind = \"constant\"\nload = \"FLASH\"\n{MODEL}"
        ),
        &files,
        "7:8",
        &[
            "constant pool `flash` has a `load` region but no `region` to run from",
            "add region = \"DTCM\"",
        ],
    );
    one_with(
        "load_on_workspace",
        &format!(
            "[[pool]]\nname = \"sram\"\nregion = \"RAM\"\nload = \"FLASH\"\n\n[[pool]]\nname = \"flash\"\nkind = \"constant\"\n{MODEL}"
        ),
        &files,
        "4:8",
        &["workspace pool `sram` has a `load` region, but only constants have an image to copy"],
    );
    // Run from DTCM, stored in QSPI: the images in QSPI, the copy NOLOAD in DTCM.
    let dir = setup("run_from_dtcm", &toml("DTCM", "QSPI"), &files);
    generates(&dir);
    let x = std::fs::read_to_string(dir.join("out/usmp.x")).unwrap();
    let image = x
        .find("  .usmp.flash.image : ALIGN(16)")
        .expect("the image section");
    let run = x
        .find("  .usmp.flash (NOLOAD) : ALIGN(16)")
        .expect("the run section");
    assert!(
        x[image..run].contains("KEEP(*(.usmp.flash.image));\n    __leusmp_flash = .;\n  } > QSPI"),
        "{x}"
    );
    assert!(x[image..run].contains("INSERT AFTER .rodata;"), "{x}");
    assert!(
        x[run..].contains("KEEP(*(.usmp.flash));\n    __eusmp_flash = .;\n  } > DTCM"),
        "{x}"
    );
    assert!(x[run..].contains("INSERT BEFORE .bss;"), "{x}");
    let code = std::fs::read_to_string(dir.join("out/usmp.rs")).unwrap();
    assert!(code.contains("loaded: true"), "{code}");
    assert!(
        code.contains("#[unsafe(link_section = \".usmp.flash.image\")]"),
        "{code}"
    );
    assert!(code.contains("fn load(i: usize)"), "{code}");
}

#[cfg(unix)]
#[test]
fn a_memory_x_that_is_not_a_file_is_refused_without_blocking() {
    let dir = setup(
        "memory_x_fifo",
        &format!(
            "[[pool]]\nname = \"sram\"\nregion = \"RAM\"\n\n[[pool]]\nname = \"flash\"\nkind = \"constant\"\n{MODEL}"
        ),
        &[],
    );
    // A FIFO nobody writes to: reading it would wait for ever.
    let made = std::process::Command::new("mkfifo")
        .arg(dir.join("memory.x"))
        .status();
    if !made.is_ok_and(|s| s.success()) {
        println!("skipped: mkfifo is not available");
        return;
    }
    let result = Config::from_file(dir.join("usmp.toml"))
        .out_dir(dir.join("out"))
        .cargo_directives(false)
        .generate();
    let Err(Error::Invalid(d)) = result else {
        panic!("a FIFO memory.x was accepted");
    };
    let d: Vec<String> = d.iter().map(ToString::to_string).collect();
    assert!(
        d[0].contains("memory.x: cannot read it: it is not a regular file"),
        "{d:#?}"
    );
    // A model path that is a FIFO is refused the same way.
    std::fs::remove_file(dir.join("memory.x")).unwrap();
    let toml = format!("{POOLS}\n[[model]]\nname = \"kws\"\npath = \"pipe.tflite\"\n");
    std::fs::write(dir.join("usmp.toml"), toml).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(dir.join("pipe.tflite"))
        .status()
        .unwrap();
    assert!(made.success());
    let result = Config::from_file(dir.join("usmp.toml"))
        .out_dir(dir.join("out"))
        .cargo_directives(false)
        .generate();
    let Err(Error::Invalid(d)) = result else {
        panic!("a FIFO model was accepted");
    };
    let d: Vec<String> = d.iter().map(ToString::to_string).collect();
    assert!(d[0].contains("pipe.tflite"), "{d:#?}");
    assert!(d[0].contains("it is not a regular file"), "{d:#?}");
}

#[test]
fn a_missing_manifest_names_the_path_and_what_to_write() {
    let dir = setup("missing_manifest", "", &[]);
    let e = Config::from_file(dir.join("nowhere/usmp.toml"))
        .out_dir(dir.join("out"))
        .cargo_directives(false)
        .generate()
        .unwrap_err()
        .to_string();
    assert!(e.contains("nowhere/usmp.toml: no such file"), "{e}");
    assert!(
        e.contains("create it with a [[pool]] and a [[model]]"),
        "{e}"
    );
}
