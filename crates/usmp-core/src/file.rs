//! Files usmp reads and writes for its users: only regular files are read (a FIFO or a
//! device would block a build for ever), every write replaces the file whole (a write
//! that fails part-way, disk full or a size limit, leaves what was there), and two paths
//! are the same file when the system says so, not when their spelling agrees.

use std::io::Write;
use std::path::{Path, PathBuf};

/// The bytes of the file at `path`, refusing what is not a regular file: a FIFO or a
/// device (`/dev/zero`) would block the build for ever or never end, and a folder says
/// nothing useful. Every file a user names (models, constants, usmp.toml, memory.x) is
/// read through here.
pub fn read(path: &Path) -> std::io::Result<Vec<u8>> {
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "it is not a regular file (a folder, a FIFO or a device); name a file",
        ));
    }
    std::fs::read(path)
}

/// Writes `bytes` to `path` as a whole: into a temporary file in the same folder, then
/// renamed over `path`, so a reader sees the old file or the new one, never half of one.
/// A symbolic link at `path` is followed: the file it names is replaced.
pub fn write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let target = match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => std::fs::canonicalize(path)?,
        _ => path.to_path_buf(),
    };
    let temporary = temporary_beside(&target);
    let written = std::fs::File::create(&temporary).and_then(|mut f| {
        f.write_all(bytes)?;
        f.flush()
    });
    let renamed = written.and_then(|()| std::fs::rename(&temporary, &target));
    if renamed.is_err() {
        // Nothing half-written stays behind either.
        let _ = std::fs::remove_file(&temporary);
    }
    renamed
}

/// A name in `target`'s folder that no other writer of this process uses at once.
fn temporary_beside(target: &Path) -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNT: AtomicU64 = AtomicU64::new(0);
    let name = target
        .file_name()
        .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
    let unique = COUNT.fetch_add(1, Ordering::Relaxed);
    target.with_file_name(format!(".{name}.{}-{unique}.tmp", std::process::id()))
}

/// Whether `a` and `b` are one file: the same device and inode where the system has them
/// (a hard link, a symbolic link, `./x` and `x` all count), the same canonical path
/// elsewhere. A path that does not exist is no file.
pub fn same(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (std::fs::metadata(a), std::fs::metadata(b)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        match (a.canonicalize(), b.canonicalize()) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code: a panic is the failure report

    use super::{read, same, write};

    fn folder(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("usmp-file-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_write_replaces_the_file_whole_and_leaves_nothing_else() {
        let dir = folder("write");
        let path = dir.join("out.bin");
        std::fs::write(&path, b"old contents").unwrap();
        write(&path, b"new").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        let names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["out.bin"], "no temporary file is left");
        // A write that cannot happen (the folder is gone) leaves no file and says why.
        let gone = dir.join("missing").join("out.bin");
        assert!(write(&gone, b"x").is_err());
        // One that fails at the end (a folder holding a file is in the way of the
        // rename): what was there stays, and the temporary file is removed.
        let busy = dir.join("busy");
        std::fs::create_dir_all(busy.join("inside")).unwrap();
        assert!(write(&busy, b"x").is_err());
        assert!(busy.join("inside").is_dir());
        let mut names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        names.sort();
        assert_eq!(names, ["busy", "out.bin"], "no temporary file is left");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_failed_write_keeps_the_old_file() {
        let dir = folder("full");
        let path = dir.join("out.bin");
        std::fs::write(&path, b"old contents").unwrap();
        // /dev/full: every write fails as on a full disk; here the folder refuses the
        // temporary file instead, by being read-only (root ignores that: then skip).
        let mut perms = std::fs::metadata(&dir).unwrap().permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o555);
        std::fs::set_permissions(&dir, perms.clone()).unwrap();
        let probe = std::fs::File::create(dir.join("probe"));
        if probe.is_ok() {
            println!("skipped: this user writes into read-only folders (root)");
        } else {
            assert!(write(&path, b"new").is_err());
            assert_eq!(std::fs::read(&path).unwrap(), b"old contents");
        }
        std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
        std::fs::set_permissions(&dir, perms).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn hard_links_are_the_same_file_and_writing_one_does_not_touch_the_other() {
        let dir = folder("links");
        let a = dir.join("model.tflite");
        let b = dir.join("link.tflite");
        std::fs::write(&a, b"model").unwrap();
        std::fs::hard_link(&a, &b).unwrap();
        assert!(same(&a, &b));
        assert!(same(&a, &dir.join(".").join("model.tflite")));
        let c = dir.join("copy.tflite");
        std::fs::write(&c, b"model").unwrap();
        assert!(!same(&a, &c));
        assert!(!same(&a, &dir.join("absent")));
        // Even written through, the rename gives the link a new file.
        write(&b, b"plan").unwrap();
        assert_eq!(std::fs::read(&a).unwrap(), b"model");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn only_regular_files_are_read() {
        let e = read(std::path::Path::new("/dev/zero")).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        assert!(read(&std::env::temp_dir()).is_err());
    }
}
