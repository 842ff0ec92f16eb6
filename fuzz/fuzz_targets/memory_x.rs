//! The memory.x reader, as a build reads it: the input is the `memory.x` beside a
//! usmp.toml whose pools name regions (workspace and constant), then planning.
#![no_main]

use libfuzzer_sys::fuzz_target;

const MANIFEST: &str = "[[pool]]\nname = \"dtcm\"\nsize = \"4 KiB\"\nregion = \"DTCM\"\n\n\
    [[pool]]\nname = \"sram\"\nregion = \"RAM\"\n\n\
    [[pool]]\nname = \"flash\"\nkind = \"constant\"\nregion = \"FLASH\"\n\n\
    [[model]]\nname = \"kws\"\npath = \"kws.json\"\n";

fuzz_target!(|data: &[u8]| {
    let dir = usmp_fuzz::model_folder().join("memory-x");
    if std::fs::create_dir_all(&dir).is_err()
        || std::fs::write(
            dir.join("usmp.toml"),
            MANIFEST.replace("kws.json", "../kws.json"),
        )
        .is_err()
        || std::fs::write(dir.join("memory.x"), data).is_err()
    {
        return;
    }
    let _ = usmp_build::Config::from_file(dir.join("usmp.toml"))
        .cargo_directives(false)
        .plan();
});
