//! Files only this user may read: the extension link's pairing secret.
//!
//! Unix: mode 0600. Windows: a protected DACL granting this user alone (nothing
//! inherited from the folder), checked again on every read: SYSTEM and the
//! Administrators group may appear too, as they can read any file anyway; anyone else
//! makes the file refused.

use std::fs::File;
use std::io::Write;
use std::path::Path;

/// Creates `path` holding `bytes`, readable and writable by this user alone. Fails if
/// the name exists.
pub fn create_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut file = create_new_private(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

#[cfg(unix)]
fn create_new_private(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
}

#[cfg(windows)]
fn create_new_private(path: &Path) -> std::io::Result<File> {
    use std::os::windows::io::FromRawHandle;
    use windows_sys::Win32::Foundation::{GENERIC_READ, GENERIC_WRITE, INVALID_HANDLE_VALUE};
    use windows_sys::Win32::Storage::FileSystem::{CREATE_NEW, CreateFileW, FILE_ATTRIBUTE_NORMAL};
    let security = crate::win::Security::this_user_only()?;
    // SAFETY: the path is NUL-terminated and the attributes outlive the call.
    let handle = unsafe {
        CreateFileW(
            crate::win::wide(path).as_ptr(),
            GENERIC_READ | GENERIC_WRITE,
            0,
            &security.attributes,
            CREATE_NEW,
            FILE_ATTRIBUTE_NORMAL,
            std::ptr::null_mut(),
        )
    };
    if handle == INVALID_HANDLE_VALUE {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a fresh handle nothing else owns.
    Ok(unsafe { File::from_raw_handle(handle) })
}

/// Ok if only this user can read the open file; else what is wrong and how to fix it.
pub fn check_private(file: &File, path: &Path) -> Result<(), String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = file
            .metadata()
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?
            .permissions()
            .mode();
        if mode & 0o077 != 0 {
            return Err(format!(
                "{} is readable by others (mode {:o}); run `chmod 600 {}`",
                path.display(),
                mode & 0o777,
                path.display()
            ));
        }
        Ok(())
    }
    #[cfg(windows)]
    {
        windows_dacl::only_this_user(file).map_err(|who| {
            format!(
                "{} is readable by {who}; run `icacls \"{}\" /inheritance:r /grant:r \"%USERNAME%\":F`",
                path.display(),
                path.display()
            )
        })
    }
}

#[cfg(windows)]
mod windows_dacl {
    use std::os::windows::io::AsRawHandle;

    use windows_sys::Win32::Foundation::{ERROR_SUCCESS, HLOCAL, LocalFree};
    use windows_sys::Win32::Security::Authorization::{GetSecurityInfo, SE_FILE_OBJECT};
    use windows_sys::Win32::Security::{
        ACCESS_ALLOWED_ACE, ACE_HEADER, ACL, DACL_SECURITY_INFORMATION, GetAce, IsWellKnownSid,
        PSECURITY_DESCRIPTOR, PSID, WinBuiltinAdministratorsSid, WinLocalSystemSid,
    };

    const ACCESS_ALLOWED_ACE_TYPE: u8 = 0;

    /// Ok if every allowing ACE names this user, SYSTEM or Administrators; else who else.
    pub(super) fn only_this_user(file: &std::fs::File) -> Result<(), String> {
        let me = crate::win::current_user_sid().map_err(|e| format!("an unknown user ({e})"))?;
        let mut dacl: *mut ACL = std::ptr::null_mut();
        let mut descriptor: PSECURITY_DESCRIPTOR = std::ptr::null_mut();
        // SAFETY: the handle is open; dacl points into descriptor, freed below.
        let status = unsafe {
            GetSecurityInfo(
                file.as_raw_handle(),
                SE_FILE_OBJECT,
                DACL_SECURITY_INFORMATION,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                &mut dacl,
                std::ptr::null_mut(),
                &mut descriptor,
            )
        };
        if status != ERROR_SUCCESS {
            return Err(format!("an unknown set of users (error {status})"));
        }
        let verdict = if dacl.is_null() {
            Err("everyone (it has no access list)".to_owned())
        } else {
            // SAFETY: dacl is a valid ACL inside descriptor.
            let count = unsafe { (*dacl).AceCount };
            (0..count).try_for_each(|index| {
                let mut ace: *mut core::ffi::c_void = std::ptr::null_mut();
                // SAFETY: index < AceCount.
                if unsafe { GetAce(dacl, index as u32, &mut ace) } == 0 {
                    return Err("an unreadable access entry".to_owned());
                }
                // SAFETY: every ACE starts with its header.
                let header = unsafe { &*(ace as *const ACE_HEADER) };
                if header.AceType != ACCESS_ALLOWED_ACE_TYPE {
                    return Ok(());
                }
                // SAFETY: an ACCESS_ALLOWED_ACE; its SID starts at SidStart.
                let sid = unsafe { &(*(ace as *const ACCESS_ALLOWED_ACE)).SidStart } as *const u32
                    as PSID;
                if sid_is(&me, sid) {
                    Ok(())
                } else {
                    Err(crate::win::sid_text(sid).unwrap_or_else(|| "another user".into()))
                }
            })
        };
        // SAFETY: allocated by GetSecurityInfo.
        unsafe { LocalFree(descriptor as HLOCAL) };
        verdict
    }

    fn sid_is(me: &crate::win::Sid, sid: PSID) -> bool {
        // SAFETY: sid points at a valid SID inside an ACE.
        unsafe {
            me.equals_raw(sid)
                || IsWellKnownSid(sid, WinLocalSystemSid) != 0
                || IsWellKnownSid(sid, WinBuiltinAdministratorsSid) != 0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_private_file_passes_its_check_and_cannot_be_created_twice() {
        let dir = std::env::temp_dir().join(format!("tw-secret-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("secret");
        create_private(&path, b"abc").unwrap();
        let file = File::open(&path).unwrap();
        check_private(&file, &path).unwrap();
        drop(file);
        assert_eq!(std::fs::read(&path).unwrap(), b"abc");
        assert!(create_private(&path, b"def").is_err());
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[cfg(windows)]
    #[test]
    fn a_file_everyone_can_read_is_refused_with_the_fix() {
        use std::os::windows::io::FromRawHandle;
        use windows_sys::Win32::Foundation::{GENERIC_WRITE, INVALID_HANDLE_VALUE};
        use windows_sys::Win32::Storage::FileSystem::{
            CREATE_ALWAYS, CreateFileW, FILE_ATTRIBUTE_NORMAL,
        };
        let path = std::env::temp_dir().join(format!("tw-open-secret-{}", std::process::id()));
        let me = crate::win::current_user_sid().unwrap();
        // Everyone (WD) may read it.
        let open =
            crate::win::Security::from_sddl(&format!("D:P(A;;GA;;;{})(A;;GR;;;WD)", me.text))
                .unwrap();
        // SAFETY: a NUL-terminated path; the attributes outlive the call.
        let handle = unsafe {
            CreateFileW(
                crate::win::wide(&path).as_ptr(),
                GENERIC_WRITE,
                0,
                &open.attributes,
                CREATE_ALWAYS,
                FILE_ATTRIBUTE_NORMAL,
                std::ptr::null_mut(),
            )
        };
        assert_ne!(handle, INVALID_HANDLE_VALUE);
        // SAFETY: a fresh handle.
        drop(unsafe { File::from_raw_handle(handle) });
        let why = check_private(&File::open(&path).unwrap(), &path).unwrap_err();
        assert!(why.contains("S-1-1-0") && why.contains("icacls"), "{why}");
        std::fs::remove_file(path).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_file_others_can_read_is_refused_with_the_fix() {
        use std::os::unix::fs::PermissionsExt;
        let path = std::env::temp_dir().join(format!("tw-open-secret-{}", std::process::id()));
        std::fs::write(&path, b"abc").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let why = check_private(&File::open(&path).unwrap(), &path).unwrap_err();
        assert!(why.contains("chmod 600"), "{why}");
        std::fs::remove_file(path).unwrap();
    }
}
