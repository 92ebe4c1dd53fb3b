//! Windows helpers the seams share: wide strings, this user's SID, and security
//! descriptors that admit this user alone.

use std::ffi::OsStr;
use std::io;
use std::os::windows::ffi::OsStrExt;
use std::ptr::null_mut;

use windows_sys::Win32::Foundation::{CloseHandle, HANDLE, HLOCAL, LocalFree};
use windows_sys::Win32::Security::Authorization::{
    ConvertSidToStringSidW, ConvertStringSecurityDescriptorToSecurityDescriptorW, SDDL_REVISION_1,
};
use windows_sys::Win32::Security::{
    EqualSid, GetTokenInformation, PSECURITY_DESCRIPTOR, SECURITY_ATTRIBUTES, TOKEN_QUERY,
    TOKEN_USER, TokenUser,
};
use windows_sys::Win32::System::Threading::{
    GetCurrentProcess, OpenProcess, OpenProcessToken, PROCESS_QUERY_LIMITED_INFORMATION,
};

/// A string as Windows wants it: UTF-16, NUL-terminated.
pub(crate) fn wide(text: impl AsRef<OsStr>) -> Vec<u16> {
    text.as_ref().encode_wide().chain(Some(0)).collect()
}

/// A NUL-terminated UTF-16 buffer back to a String.
pub(crate) fn from_wide(buffer: &[u16]) -> String {
    let end = buffer.iter().position(|&c| c == 0).unwrap_or(buffer.len());
    String::from_utf16_lossy(&buffer[..end])
}

/// Turns a Win32 BOOL result into io::Result, reading the last error on failure.
pub(crate) fn check(result: i32) -> io::Result<()> {
    if result == 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// A handle closed on drop.
pub(crate) struct Handle(pub HANDLE);

impl Drop for Handle {
    fn drop(&mut self) {
        if !self.0.is_null() {
            // SAFETY: the handle was opened by us and is closed once.
            unsafe { CloseHandle(self.0) };
        }
    }
}

/// A user's SID: its bytes (to compare) and its text (for SDDL and names).
pub(crate) struct Sid {
    bytes: Vec<u8>,
    pub text: String,
}

impl Sid {
    pub(crate) fn equals(&self, other: &Sid) -> bool {
        // SAFETY: both buffers hold valid SIDs read from tokens.
        unsafe { EqualSid(self.bytes.as_ptr() as _, other.bytes.as_ptr() as _) != 0 }
    }
}

/// The user this process runs as.
pub(crate) fn current_user_sid() -> io::Result<Sid> {
    // SAFETY: GetCurrentProcess returns a pseudo-handle that needs no closing.
    token_user(unsafe { GetCurrentProcess() })
}

/// The user another process runs as.
pub(crate) fn process_user_sid(pid: u32) -> io::Result<Sid> {
    // SAFETY: OpenProcess with a query right; the handle is closed by `Handle`.
    let process = unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
    if process.is_null() {
        return Err(io::Error::last_os_error());
    }
    let process = Handle(process);
    token_user(process.0)
}

fn token_user(process: HANDLE) -> io::Result<Sid> {
    let mut token: HANDLE = null_mut();
    // SAFETY: `token` receives a new handle, closed by `Handle`.
    check(unsafe { OpenProcessToken(process, TOKEN_QUERY, &mut token) })?;
    let token = Handle(token);
    let mut needed = 0u32;
    // SAFETY: a size query with no buffer.
    unsafe { GetTokenInformation(token.0, TokenUser, null_mut(), 0, &mut needed) };
    let mut buffer = vec![0u8; needed as usize];
    // SAFETY: the buffer is `needed` bytes, as the size query asked.
    check(unsafe {
        GetTokenInformation(
            token.0,
            TokenUser,
            buffer.as_mut_ptr().cast(),
            needed,
            &mut needed,
        )
    })?;
    // SAFETY: GetTokenInformation wrote a TOKEN_USER at the buffer's start.
    let user = unsafe { std::ptr::read_unaligned(buffer.as_ptr() as *const TOKEN_USER) };
    let sid = user.User.Sid;
    // SAFETY: the SID points into `buffer`, which is alive; its length is read from it.
    let length = unsafe { windows_sys::Win32::Security::GetLengthSid(sid) } as usize;
    // SAFETY: `length` bytes of a valid SID.
    let bytes = unsafe { std::slice::from_raw_parts(sid as *const u8, length) }.to_vec();
    let mut text_ptr: *mut u16 = null_mut();
    // SAFETY: text_ptr receives a LocalAlloc'd string, freed below.
    check(unsafe { ConvertSidToStringSidW(sid, &mut text_ptr) })?;
    // SAFETY: a NUL-terminated string from ConvertSidToStringSidW.
    let text = unsafe {
        let mut len = 0;
        while *text_ptr.add(len) != 0 {
            len += 1;
        }
        let text = String::from_utf16_lossy(std::slice::from_raw_parts(text_ptr, len));
        LocalFree(text_ptr as HLOCAL);
        text
    };
    Ok(Sid { bytes, text })
}

/// A security descriptor from SDDL, freed on drop, and the SECURITY_ATTRIBUTES that point
/// at it.
pub(crate) struct Security {
    descriptor: PSECURITY_DESCRIPTOR,
    pub attributes: SECURITY_ATTRIBUTES,
}

impl Security {
    /// Full access for this user alone, nothing inherited from the parent (`D:P`).
    pub(crate) fn this_user_only() -> io::Result<Security> {
        let sid = current_user_sid()?;
        Security::from_sddl(&format!("D:P(A;;GA;;;{})", sid.text))
    }

    pub(crate) fn from_sddl(sddl: &str) -> io::Result<Security> {
        let mut descriptor: PSECURITY_DESCRIPTOR = null_mut();
        // SAFETY: the SDDL is NUL-terminated; the descriptor is freed on drop.
        check(unsafe {
            ConvertStringSecurityDescriptorToSecurityDescriptorW(
                wide(sddl).as_ptr(),
                SDDL_REVISION_1,
                &mut descriptor,
                null_mut(),
            )
        })?;
        Ok(Security {
            descriptor,
            attributes: SECURITY_ATTRIBUTES {
                nLength: std::mem::size_of::<SECURITY_ATTRIBUTES>() as u32,
                lpSecurityDescriptor: descriptor,
                bInheritHandle: 0,
            },
        })
    }
}

impl Drop for Security {
    fn drop(&mut self) {
        // SAFETY: allocated by ConvertStringSecurityDescriptorToSecurityDescriptorW.
        unsafe { LocalFree(self.descriptor as HLOCAL) };
    }
}

impl Sid {
    /// Whether this SID equals a raw one (inside an ACE, say).
    ///
    /// # Safety
    /// `other` must point at a valid SID.
    pub(crate) unsafe fn equals_raw(&self, other: windows_sys::Win32::Security::PSID) -> bool {
        // SAFETY: self holds a valid SID; the caller vouches for `other`.
        unsafe { EqualSid(self.bytes.as_ptr() as _, other) != 0 }
    }
}

/// A raw SID as text (S-1-5-…), if it converts.
pub(crate) fn sid_text(sid: windows_sys::Win32::Security::PSID) -> Option<String> {
    let mut text_ptr: *mut u16 = null_mut();
    // SAFETY: text_ptr receives a LocalAlloc'd string, freed below.
    if unsafe { ConvertSidToStringSidW(sid, &mut text_ptr) } == 0 {
        return None;
    }
    // SAFETY: a NUL-terminated string from ConvertSidToStringSidW.
    unsafe {
        let mut len = 0;
        while *text_ptr.add(len) != 0 {
            len += 1;
        }
        let text = String::from_utf16_lossy(std::slice::from_raw_parts(text_ptr, len));
        LocalFree(text_ptr as HLOCAL);
        Some(text)
    }
}

/// Registry access: what the browsers' App Paths say, and native-messaging keys.
pub(crate) mod registry {
    use std::io;

    use windows_sys::Win32::Foundation::ERROR_SUCCESS;
    use windows_sys::Win32::System::Registry::{
        HKEY, HKEY_CURRENT_USER, HKEY_LOCAL_MACHINE, KEY_WRITE, REG_EXPAND_SZ,
        REG_OPTION_NON_VOLATILE, REG_SZ, RRF_NOEXPAND, RRF_RT_REG_EXPAND_SZ, RRF_RT_REG_SZ,
        RegCloseKey, RegCreateKeyExW, RegGetValueW, RegSetValueExW,
    };

    use super::{from_wide, wide};

    /// The two hives a per-user or machine-wide install writes to.
    #[derive(Clone, Copy)]
    pub(crate) enum Hive {
        CurrentUser,
        LocalMachine,
    }

    fn root(hive: Hive) -> HKEY {
        match hive {
            Hive::CurrentUser => HKEY_CURRENT_USER,
            Hive::LocalMachine => HKEY_LOCAL_MACHINE,
        }
    }

    /// A key's default value, when it is a string.
    pub(crate) fn default_value(hive: Hive, key: &str) -> Option<String> {
        let key = wide(key);
        let mut buffer = vec![0u16; 1024];
        let mut bytes = (buffer.len() * 2) as u32;
        let mut kind = 0u32;
        // SAFETY: the buffer is `bytes` long; a NULL value name reads the default value.
        let status = unsafe {
            RegGetValueW(
                root(hive),
                key.as_ptr(),
                std::ptr::null(),
                // Asking for REG_EXPAND_SZ needs RRF_NOEXPAND; it is expanded below.
                RRF_RT_REG_SZ | RRF_RT_REG_EXPAND_SZ | RRF_NOEXPAND,
                &mut kind,
                buffer.as_mut_ptr().cast(),
                &mut bytes,
            )
        };
        if status != ERROR_SUCCESS || (kind != REG_SZ && kind != REG_EXPAND_SZ) {
            return None;
        }
        let value = from_wide(&buffer);
        let value = if kind == REG_EXPAND_SZ {
            expanded(&value)
        } else {
            value
        };
        Some(value).filter(|v| !v.is_empty())
    }

    /// `%ProgramFiles%\…` with the variables filled in.
    fn expanded(value: &str) -> String {
        use windows_sys::Win32::System::Environment::ExpandEnvironmentStringsW;
        let source = wide(value);
        let mut buffer = vec![0u16; 2048];
        // SAFETY: the buffer holds the length given.
        let len = unsafe {
            ExpandEnvironmentStringsW(source.as_ptr(), buffer.as_mut_ptr(), buffer.len() as u32)
        } as usize;
        if len == 0 || len > buffer.len() {
            return value.to_owned();
        }
        from_wide(&buffer)
    }

    /// Creates `key` under the current user and sets its default value.
    pub(crate) fn set_user_default(key: &str, value: &str) -> io::Result<()> {
        let mut handle: HKEY = std::ptr::null_mut();
        // SAFETY: a NUL-terminated key; the handle is closed below.
        let status = unsafe {
            RegCreateKeyExW(
                HKEY_CURRENT_USER,
                wide(key).as_ptr(),
                0,
                std::ptr::null(),
                REG_OPTION_NON_VOLATILE,
                KEY_WRITE,
                std::ptr::null(),
                &mut handle,
                std::ptr::null_mut(),
            )
        };
        if status != ERROR_SUCCESS {
            return Err(io::Error::from_raw_os_error(status as i32));
        }
        let data = wide(value);
        // SAFETY: an open key; the data is `len * 2` bytes including its NUL.
        let status = unsafe {
            RegSetValueExW(
                handle,
                std::ptr::null(),
                0,
                REG_SZ,
                data.as_ptr().cast(),
                (data.len() * 2) as u32,
            )
        };
        // SAFETY: opened above.
        unsafe { RegCloseKey(handle) };
        if status != ERROR_SUCCESS {
            return Err(io::Error::from_raw_os_error(status as i32));
        }
        Ok(())
    }
}
