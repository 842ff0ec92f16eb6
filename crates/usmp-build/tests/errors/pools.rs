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
