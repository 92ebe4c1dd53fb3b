//! A browser launched with its CDP pipe, tied to this process's life; and a process
//! started to outlive its parent (the broker).
//!
//! Chromium's `--remote-debugging-pipe` reads commands from file descriptor 3 and writes
//! replies to 4. On Unix those are real descriptors placed with `dup2` between fork and
//! exec. On Windows they are C-runtime descriptors: the pipe handles travel in
//! `STARTUPINFO.lpReserved2`, the block the C runtime reads at start to rebuild a
//! parent's descriptor table (what libuv does for Node's `stdio[3]`, and how Playwright
//! drives Chromium on Windows), and a handle list limits inheritance to exactly those.
//!
//! The browser dies with us: on Linux `PR_SET_PDEATHSIG` (and the pipe closing, which
//! Chromium takes as the end); on macOS the pipe closing; on Windows a job object that
//! kills every process in it when its last handle (ours) closes, however we end.

use std::io;
use std::path::Path;

/// Our end of the pipe Chromium reads commands from.
#[cfg(unix)]
pub type PipeWriter = tokio::net::unix::pipe::Sender;
/// Our end of the pipe Chromium writes replies to.
#[cfg(unix)]
pub type PipeReader = tokio::net::unix::pipe::Receiver;
#[cfg(windows)]
pub type PipeWriter = tokio::net::windows::named_pipe::NamedPipeServer;
#[cfg(windows)]
pub type PipeReader = tokio::net::windows::named_pipe::NamedPipeServer;

/// A launched browser and our ends of its CDP pipe.
pub struct Spawned {
    pub process: BrowserProcess,
    pub to_browser: PipeWriter,
    pub from_browser: PipeReader,
    /// How much of what we wrote toward the browser it has not read.
    pub backlog: PipeBacklog,
}

/// Asks the pipe toward the browser how many of the bytes written into it the browser
/// has not read. After the browser died, a command whose bytes are all still in the
/// pipe provably never ran. Only Linux can say (`FIONREAD` on the write end); elsewhere
/// the answer is None and a command written before a death may have run.
pub struct PipeBacklog {
    #[cfg(target_os = "linux")]
    fd: std::os::fd::OwnedFd,
}

impl PipeBacklog {
    /// A second handle on our write end (dup'd, so the writer may drop its own).
    #[cfg(unix)]
    #[cfg_attr(not(target_os = "linux"), allow(unused_variables))]
    fn of(fd: &std::os::fd::OwnedFd) -> io::Result<PipeBacklog> {
        Ok(PipeBacklog {
            #[cfg(target_os = "linux")]
            fd: fd.try_clone()?,
        })
    }

    /// Bytes in the pipe the browser has not read, where the system can say.
    pub fn unread(&self) -> Option<u64> {
        #[cfg(target_os = "linux")]
        {
            rustix::io::ioctl_fionread(&self.fd).ok()
        }
        #[cfg(not(target_os = "linux"))]
        {
            None
        }
    }
}

/// A browser process we started. Dropping it kills the browser.
pub struct BrowserProcess {
    #[cfg(unix)]
    child: tokio::process::Child,
    #[cfg(windows)]
    inner: windows::Process,
}

impl BrowserProcess {
    pub fn id(&self) -> Option<u32> {
        #[cfg(unix)]
        {
            self.child.id()
        }
        #[cfg(windows)]
        {
            Some(self.inner.pid)
        }
    }

    /// Waits for it to exit; how it did, in words.
    pub async fn wait(&mut self) -> io::Result<String> {
        #[cfg(unix)]
        {
            use std::os::unix::process::ExitStatusExt;
            let status = self.child.wait().await?;
            Ok(match (status.code(), status.signal()) {
                (Some(code), _) => format!("the browser process exited with code {code}"),
                (None, Some(signal)) => {
                    format!("the browser process was killed by signal {signal}")
                }
                _ => "the browser process exited".to_owned(),
            })
        }
        #[cfg(windows)]
        {
            let code = self.inner.wait().await?;
            Ok(format!("the browser process exited with code {code}"))
        }
    }

    /// Kills it (and, on Windows, every process it started).
    pub fn start_kill(&mut self) -> io::Result<()> {
        #[cfg(unix)]
        {
            self.child.start_kill()
        }
        #[cfg(windows)]
        {
            self.inner.kill()
        }
    }
}

/// Starts `binary` with `args`, its CDP pipe on descriptors 3 and 4, its standard
/// streams on the null device. On Linux this must run on a thread that lives as long as
/// the browser should (a runtime worker, never `spawn_blocking`): the parent-death signal
/// fires when the thread that forked exits.
pub async fn spawn_with_cdp_pipe(binary: &Path, args: &[String]) -> io::Result<Spawned> {
    #[cfg(unix)]
    {
        unix::spawn(binary, args)
    }
    #[cfg(windows)]
    {
        windows::spawn(binary, args).await
    }
}

/// Makes `command` start in a session of its own, so it outlives the process (and the
/// terminal or client) that started it: `setsid` on Unix, a detached process in its own
/// process group on Windows.
pub fn detach(command: &mut tokio::process::Command) {
    #[cfg(unix)]
    {
        // SAFETY: setsid is async-signal-safe and touches no memory of ours.
        unsafe {
            command.pre_exec(|| {
                rustix::process::setsid()?;
                Ok(())
            });
        }
    }
    #[cfg(windows)]
    {
        use windows_sys::Win32::System::Threading::{CREATE_NEW_PROCESS_GROUP, DETACHED_PROCESS};
        command.creation_flags(DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP);
    }
}

/// One argument as the Microsoft C runtime splits a command line: quoted when it holds
/// white space or a quote, backslashes doubled only where they precede a quote.
pub fn quote_windows_arg(arg: &str) -> String {
    if !arg.is_empty() && !arg.contains([' ', '\t', '\n', '\u{b}', '"']) {
        return arg.to_owned();
    }
    let mut quoted = String::with_capacity(arg.len() + 2);
    quoted.push('"');
    let mut backslashes = 0;
    for c in arg.chars() {
        match c {
            '\\' => backslashes += 1,
            '"' => {
                quoted.extend(std::iter::repeat_n('\\', backslashes * 2 + 1));
                quoted.push('"');
                backslashes = 0;
            }
            _ => {
                quoted.extend(std::iter::repeat_n('\\', backslashes));
                quoted.push(c);
                backslashes = 0;
            }
        }
    }
    quoted.extend(std::iter::repeat_n('\\', backslashes * 2));
    quoted.push('"');
    quoted
}

#[cfg(unix)]
mod unix {
    use std::io;
    use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, IntoRawFd, OwnedFd, RawFd};
    use std::path::Path;
    use std::process::Stdio;

    use super::{BrowserProcess, Spawned};

    pub(super) fn spawn(binary: &Path, args: &[String]) -> io::Result<Spawned> {
        // O_CLOEXEC keeps our ends out of the child; its copies are made by dup2, which
        // clears the flag.
        let (browser_reads, to_browser) = cloexec_pipe()?;
        let (from_browser, browser_writes) = cloexec_pipe()?;
        let (read_fd, write_fd) = (browser_reads.as_raw_fd(), browser_writes.as_raw_fd());
        let mut command = tokio::process::Command::new(binary);
        command
            .kill_on_drop(true)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // SAFETY: between fork and exec only async-signal-safe system calls run (dup,
        // fcntl, prctl), on descriptors the child owns.
        unsafe {
            command.pre_exec(move || {
                // Moving 4 onto 3 first would clobber it; lift it out of the way.
                let write_fd = if write_fd == 3 {
                    let lifted = rustix::io::fcntl_dupfd_cloexec(borrow(write_fd), 5)?;
                    lifted.into_raw_fd()
                } else {
                    write_fd
                };
                place(read_fd, 3)?;
                place(write_fd, 4)?;
                #[cfg(target_os = "linux")]
                rustix::process::set_parent_process_death_signal(Some(
                    rustix::process::Signal::TERM,
                ))?;
                Ok(())
            });
        }
        let child = command.spawn()?;
        drop(browser_reads);
        drop(browser_writes);
        Ok(Spawned {
            process: BrowserProcess { child },
            backlog: super::PipeBacklog::of(&to_browser)?,
            to_browser: tokio::net::unix::pipe::Sender::from_owned_fd(to_browser)?,
            from_browser: tokio::net::unix::pipe::Receiver::from_owned_fd(from_browser)?,
        })
    }

    /// A pipe whose ends close on exec (atomically where the system can: pipe2 on
    /// Linux; macOS has no pipe2, so the flag is set just after).
    fn cloexec_pipe() -> io::Result<(OwnedFd, OwnedFd)> {
        #[cfg(target_os = "linux")]
        {
            Ok(rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?)
        }
        #[cfg(not(target_os = "linux"))]
        {
            let (read, write) = rustix::pipe::pipe()?;
            for fd in [&read, &write] {
                rustix::io::fcntl_setfd(fd, rustix::io::FdFlags::CLOEXEC)?;
            }
            Ok((read, write))
        }
    }

    fn borrow<'a>(fd: RawFd) -> BorrowedFd<'a> {
        // SAFETY: only called in the child on descriptors open there.
        unsafe { BorrowedFd::borrow_raw(fd) }
    }

    /// Puts `fd` at `target`, open across exec.
    fn place(fd: RawFd, target: RawFd) -> io::Result<()> {
        if fd == target {
            rustix::io::fcntl_setfd(borrow(fd), rustix::io::FdFlags::empty())?;
            return Ok(());
        }
        // SAFETY: `target` is a descriptor number the child is free to replace; the
        // OwnedFd is never dropped, so nothing closes it.
        let mut slot = std::mem::ManuallyDrop::new(unsafe { OwnedFd::from_raw_fd(target) });
        rustix::io::dup2(borrow(fd), &mut slot)?;
        Ok(())
    }
}

#[cfg(windows)]
mod windows {
    use std::io;
    use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle, RawHandle};
    use std::path::Path;

    use tokio::net::windows::named_pipe::{NamedPipeServer, ServerOptions};
    use windows_sys::Win32::Foundation::{
        GENERIC_READ, GENERIC_WRITE, HANDLE, INVALID_HANDLE_VALUE, WAIT_OBJECT_0,
    };
    use windows_sys::Win32::Security::SECURITY_ATTRIBUTES;
    use windows_sys::Win32::Storage::FileSystem::{
        CreateFileW, FILE_SHARE_READ, FILE_SHARE_WRITE, OPEN_EXISTING,
    };
    use windows_sys::Win32::System::JobObjects::{
        AssignProcessToJobObject, CreateJobObjectW, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
        JOBOBJECT_EXTENDED_LIMIT_INFORMATION, JobObjectExtendedLimitInformation,
        SetInformationJobObject, TerminateJobObject,
    };
    use windows_sys::Win32::System::Threading::{
        CREATE_SUSPENDED, CREATE_UNICODE_ENVIRONMENT, CreateProcessW,
        DeleteProcThreadAttributeList, EXTENDED_STARTUPINFO_PRESENT, GetExitCodeProcess, INFINITE,
        InitializeProcThreadAttributeList, LPPROC_THREAD_ATTRIBUTE_LIST,
        PROC_THREAD_ATTRIBUTE_HANDLE_LIST, PROCESS_INFORMATION, ResumeThread, STARTF_USESTDHANDLES,
        STARTUPINFOEXW, TerminateProcess, UpdateProcThreadAttribute, WaitForSingleObject,
    };

    use super::{BrowserProcess, Spawned, quote_windows_arg};
    use crate::win::{check, wide};

    /// The C runtime's descriptor flags (`FOPEN`, `FPIPE`, `FDEV`).
    const FOPEN: u8 = 0x01;
    const FPIPE: u8 = 0x08;
    const FDEV: u8 = 0x40;

    pub(super) struct Process {
        pub(super) pid: u32,
        process: OwnedHandle,
        /// Closing it kills the browser and its helpers (None if we could not make one:
        /// then only the pipe closing ends the browser).
        job: Option<OwnedHandle>,
        exited: Option<tokio::sync::oneshot::Receiver<u32>>,
        exit_code: Option<u32>,
    }

    impl Process {
        pub(super) async fn wait(&mut self) -> io::Result<u32> {
            if let Some(code) = self.exit_code {
                return Ok(code);
            }
            let exited = self
                .exited
                .take()
                .ok_or_else(|| io::Error::other("already waited"))?;
            let code = exited
                .await
                .map_err(|_| io::Error::other("the browser process could not be waited for"))?;
            self.exit_code = Some(code);
            Ok(code)
        }

        pub(super) fn kill(&mut self) -> io::Result<()> {
            // SAFETY: handles we own; a job takes the browser's helpers with it.
            match &self.job {
                Some(job) => check(unsafe { TerminateJobObject(job.as_raw_handle() as HANDLE, 1) }),
                None => {
                    check(unsafe { TerminateProcess(self.process.as_raw_handle() as HANDLE, 1) })
                }
            }
        }
    }

    impl Drop for Process {
        fn drop(&mut self) {
            if self.job.is_none() && self.exit_code.is_none() {
                let _ = self.kill();
            }
            // The job closes with it, and its kill-on-close limit ends the browser.
        }
    }

    fn inheritable() -> SECURITY_ATTRIBUTES {
        SECURITY_ATTRIBUTES {
            nLength: std::mem::size_of::<SECURITY_ATTRIBUTES>() as u32,
            lpSecurityDescriptor: std::ptr::null_mut(),
            bInheritHandle: 1,
        }
    }

    fn open(name: &str, access: u32, share: u32) -> io::Result<OwnedHandle> {
        let attributes = inheritable();
        // SAFETY: a NUL-terminated name; the handle is owned below.
        let handle = unsafe {
            CreateFileW(
                wide(name).as_ptr(),
                access,
                share,
                &attributes,
                OPEN_EXISTING,
                0,
                std::ptr::null_mut(),
            )
        };
        if handle == INVALID_HANDLE_VALUE {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a fresh handle nothing else owns.
        Ok(unsafe { OwnedHandle::from_raw_handle(handle as RawHandle) })
    }

    /// One direction of the CDP pipe: our overlapped server end, and the browser's
    /// synchronous, inheritable client end (opening it connects the pipe).
    async fn pipe(outbound: bool) -> io::Result<(NamedPipeServer, OwnedHandle)> {
        let name = format!(
            r"\\.\pipe\tabwire-cdp-{}-{}",
            std::process::id(),
            crate::random::hex(8)?
        );
        let server = {
            let security = crate::win::Security::this_user_only()?;
            let mut options = ServerOptions::new();
            options
                .first_pipe_instance(true)
                .max_instances(1)
                .reject_remote_clients(true)
                .access_inbound(!outbound)
                .access_outbound(outbound);
            // SAFETY: the attributes outlive the call.
            unsafe {
                options.create_with_security_attributes_raw(
                    &name,
                    &security.attributes as *const _ as *mut core::ffi::c_void,
                )?
            }
        };
        let access = if outbound {
            GENERIC_READ
        } else {
            GENERIC_WRITE
        };
        let client = open(&name, access, 0)?;
        // The client end is open, so this returns at once; until it is called the
        // server end may not carry data (Wine holds writes back).
        server.connect().await?;
        Ok((server, client))
    }

    /// The C runtime's inherited-descriptor block: a count, a flag byte per descriptor,
    /// then a handle per descriptor, packed.
    fn crt_block(entries: &[(u8, HANDLE)]) -> Vec<u8> {
        let mut block = Vec::new();
        block.extend_from_slice(&(entries.len() as u32).to_le_bytes());
        block.extend(entries.iter().map(|(flags, _)| *flags));
        for (_, handle) in entries {
            block.extend_from_slice(&(*handle as usize).to_le_bytes());
        }
        block
    }

    pub(super) async fn spawn(binary: &Path, args: &[String]) -> io::Result<Spawned> {
        let (to_browser, browser_reads) = pipe(true).await?;
        let (from_browser, browser_writes) = pipe(false).await?;
        let null = open(
            "NUL",
            GENERIC_READ | GENERIC_WRITE,
            FILE_SHARE_READ | FILE_SHARE_WRITE,
        )?;
        let raw = |h: &OwnedHandle| h.as_raw_handle() as HANDLE;
        let block = crt_block(&[
            (FOPEN | FDEV, raw(&null)),
            (FOPEN | FDEV, raw(&null)),
            (FOPEN | FDEV, raw(&null)),
            (FOPEN | FPIPE, raw(&browser_reads)),
            (FOPEN | FPIPE, raw(&browser_writes)),
        ]);
        let inherited = [raw(&null), raw(&browser_reads), raw(&browser_writes)];
        let attributes = AttributeList::handles(&inherited)?;

        let mut command_line = quote_windows_arg(&binary.display().to_string());
        for arg in args {
            command_line.push(' ');
            command_line.push_str(&quote_windows_arg(arg));
        }
        let mut command_line = wide(&command_line);
        // SAFETY: zeroed is a valid STARTUPINFOEXW; the fields that matter are set.
        let mut startup: STARTUPINFOEXW = unsafe { std::mem::zeroed() };
        startup.StartupInfo.cb = std::mem::size_of::<STARTUPINFOEXW>() as u32;
        startup.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
        startup.StartupInfo.hStdInput = raw(&null);
        startup.StartupInfo.hStdOutput = raw(&null);
        startup.StartupInfo.hStdError = raw(&null);
        startup.StartupInfo.cbReserved2 = block.len() as u16;
        startup.StartupInfo.lpReserved2 = block.as_ptr() as *mut u8;
        startup.lpAttributeList = attributes.list;
        // SAFETY: zeroed is a valid PROCESS_INFORMATION, filled in by CreateProcessW.
        let mut info: PROCESS_INFORMATION = unsafe { std::mem::zeroed() };
        // SAFETY: every pointer is valid for the call; the block, the attribute list and
        // the inherited handles outlive it. Suspended, so it joins its job before it can
        // start any helper.
        check(unsafe {
            CreateProcessW(
                wide(binary).as_ptr(),
                command_line.as_mut_ptr(),
                std::ptr::null(),
                std::ptr::null(),
                1,
                EXTENDED_STARTUPINFO_PRESENT | CREATE_SUSPENDED | CREATE_UNICODE_ENVIRONMENT,
                std::ptr::null(),
                std::ptr::null(),
                &startup.StartupInfo,
                &mut info,
            )
        })?;
        // SAFETY: fresh handles from CreateProcessW, owned from here on.
        let (process, thread) = unsafe {
            (
                OwnedHandle::from_raw_handle(info.hProcess as RawHandle),
                OwnedHandle::from_raw_handle(info.hThread as RawHandle),
            )
        };
        let job = kill_on_close_job(raw(&process));
        // SAFETY: the suspended main thread of the process we just made.
        unsafe { ResumeThread(raw(&thread)) };
        drop((browser_reads, browser_writes, null, attributes));
        let exited = watch_exit(&process)?;
        Ok(Spawned {
            process: BrowserProcess {
                inner: Process {
                    pid: info.dwProcessId,
                    process,
                    job,
                    exited: Some(exited),
                    exit_code: None,
                },
            },
            to_browser,
            from_browser,
            backlog: super::PipeBacklog {},
        })
    }

    /// A job that kills every process in it when its last handle closes, with `process`
    /// in it. None when the job cannot be made or joined (a parent job that forbids it):
    /// the pipe closing still ends the browser.
    fn kill_on_close_job(process: HANDLE) -> Option<OwnedHandle> {
        // SAFETY: an anonymous job with default security; owned below.
        let job = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
        if job.is_null() {
            return None;
        }
        // SAFETY: a fresh handle nothing else owns.
        let job = unsafe { OwnedHandle::from_raw_handle(job as RawHandle) };
        // SAFETY: zeroed is a valid limit block; only the flag is set.
        let mut limits: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = unsafe { std::mem::zeroed() };
        limits.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
        // SAFETY: the job handle is open; the limits block is the size given.
        let joined = unsafe {
            SetInformationJobObject(
                job.as_raw_handle() as HANDLE,
                JobObjectExtendedLimitInformation,
                &limits as *const _ as *const core::ffi::c_void,
                std::mem::size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
            ) != 0
                && AssignProcessToJobObject(job.as_raw_handle() as HANDLE, process) != 0
        };
        joined.then_some(job)
    }

    /// A thread that waits for the process and reports its exit code.
    fn watch_exit(process: &OwnedHandle) -> io::Result<tokio::sync::oneshot::Receiver<u32>> {
        let handle = process.try_clone()?;
        let (tx, rx) = tokio::sync::oneshot::channel();
        std::thread::Builder::new()
            .name("tabwire-browser-wait".into())
            .spawn(move || {
                let raw = handle.as_raw_handle() as HANDLE;
                // SAFETY: a process handle we own for the thread's life.
                let waited = unsafe { WaitForSingleObject(raw, INFINITE) };
                let mut code = 0u32;
                // SAFETY: the same handle; code receives the exit code.
                if waited == WAIT_OBJECT_0 && unsafe { GetExitCodeProcess(raw, &mut code) } != 0 {
                    let _ = tx.send(code);
                }
            })?;
        Ok(rx)
    }

    /// A process-thread attribute list naming exactly the handles the child inherits.
    struct AttributeList {
        list: LPPROC_THREAD_ATTRIBUTE_LIST,
        _memory: Vec<u8>,
        _handles: Box<[HANDLE]>,
    }

    impl AttributeList {
        fn handles(handles: &[HANDLE]) -> io::Result<AttributeList> {
            let mut size = 0usize;
            // SAFETY: a size query.
            unsafe { InitializeProcThreadAttributeList(std::ptr::null_mut(), 1, 0, &mut size) };
            let mut memory = vec![0u8; size];
            let list = memory.as_mut_ptr() as LPPROC_THREAD_ATTRIBUTE_LIST;
            // SAFETY: memory is `size` bytes, as asked.
            check(unsafe { InitializeProcThreadAttributeList(list, 1, 0, &mut size) })?;
            let handles: Box<[HANDLE]> = handles.into();
            // SAFETY: the handle array lives as long as the list (both in Self).
            check(unsafe {
                UpdateProcThreadAttribute(
                    list,
                    0,
                    PROC_THREAD_ATTRIBUTE_HANDLE_LIST as usize,
                    handles.as_ptr() as *const core::ffi::c_void,
                    std::mem::size_of_val(&*handles),
                    std::ptr::null_mut(),
                    std::ptr::null(),
                )
            })?;
            Ok(AttributeList {
                list,
                _memory: memory,
                _handles: handles,
            })
        }
    }

    impl Drop for AttributeList {
        fn drop(&mut self) {
            // SAFETY: initialised in `handles`.
            unsafe { DeleteProcThreadAttributeList(self.list) };
        }
    }

    #[cfg(test)]
    mod tests {
        #[test]
        fn the_crt_block_is_packed_as_the_runtime_reads_it() {
            let block = super::crt_block(&[(1, 7 as _), (9, 8 as _)]);
            assert_eq!(block.len(), 4 + 2 + 2 * std::mem::size_of::<usize>());
            assert_eq!(&block[..6], &[2, 0, 0, 0, 1, 9]);
            assert_eq!(block[6], 7);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::quote_windows_arg as q;

    /// When started by `a_child_gets_its_pipe_on_descriptors_3_and_4`, this test binary
    /// plays the browser: it reads one NUL-framed message from descriptor 3, writes it
    /// back on 4 with a prefix, and waits to be killed.
    #[test]
    fn pipe_child() {
        // The marker is a second test filter, so only the child sees it.
        if !std::env::args().any(|a| a == "tabwire-pipe-child") {
            return;
        }
        // A browser that ignores its pipe closing: only the platform's tie can end it.
        if std::env::args().any(|a| a == "tabwire-pipe-stubborn") {
            loop {
                std::thread::park();
            }
        }
        use std::io::{Read, Write};
        let (mut input, mut output) = inherited_pipe();
        let mut message = Vec::new();
        let mut byte = [0u8; 1];
        while input.read_exact(&mut byte).is_ok() && byte[0] != 0 {
            message.push(byte[0]);
        }
        output.write_all(b"echo ").unwrap();
        output.write_all(&message).unwrap();
        output.write_all(&[0]).unwrap();
        output.flush().unwrap();
        // Until killed, or until the parent closes its end.
        let _ = input.read(&mut byte);
    }

    #[cfg(unix)]
    fn inherited_pipe() -> (std::fs::File, std::fs::File) {
        use std::os::fd::FromRawFd;
        // SAFETY: the parent placed the pipe's ends on 3 and 4.
        unsafe { (std::fs::File::from_raw_fd(3), std::fs::File::from_raw_fd(4)) }
    }

    #[cfg(windows)]
    fn inherited_pipe() -> (std::fs::File, std::fs::File) {
        use std::os::windows::io::FromRawHandle;
        unsafe extern "C" {
            fn _get_osfhandle(fd: i32) -> isize;
        }
        // SAFETY: the C runtime rebuilt descriptors 3 and 4 from lpReserved2, as
        // Chromium's does.
        unsafe {
            (
                std::fs::File::from_raw_handle(_get_osfhandle(3) as _),
                std::fs::File::from_raw_handle(_get_osfhandle(4) as _),
            )
        }
    }

    /// When started by `a_browser_dies_with_the_process_that_launched_it`, this test
    /// binary launches a browser stand-in (`pipe_child`), says its pid, and waits to be
    /// killed.
    #[test]
    fn pipe_parent() {
        if !std::env::args().any(|a| a == "tabwire-pipe-parent") {
            return;
        }
        let runtime = tokio::runtime::Runtime::new().unwrap();
        runtime.block_on(async {
            let me = std::env::current_exe().unwrap();
            let args = [
                "--exact",
                "process::tests::pipe_child",
                "tabwire-pipe-child",
                "tabwire-pipe-stubborn",
                "--nocapture",
            ]
            .map(String::from);
            let spawned = super::spawn_with_cdp_pipe(&me, &args).await.unwrap();
            println!("child {}", spawned.process.id().unwrap());
            std::future::pending::<()>().await;
        });
    }

    /// However its parent ends (here: killed outright, no cleanup), the browser goes:
    /// a kill-on-close job on Windows, the parent-death signal on Linux.
    #[cfg(any(windows, target_os = "linux"))]
    #[test]
    fn a_browser_dies_with_the_process_that_launched_it() {
        use std::io::BufRead;
        let mut parent = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "process::tests::pipe_parent",
                "tabwire-pipe-parent",
                "--nocapture",
            ])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut said = String::new();
        let mut lines = std::io::BufReader::new(parent.stdout.take().unwrap());
        while !said.starts_with("child ") {
            said.clear();
            assert!(
                lines.read_line(&mut said).unwrap() > 0,
                "the parent ended without a child"
            );
        }
        let child: u32 = said["child ".len()..].trim().parse().unwrap();
        parent.kill().unwrap();
        parent.wait().unwrap();
        assert!(
            exits_within(child, std::time::Duration::from_secs(30)),
            "the browser outlived its parent"
        );
    }

    /// Whether process `pid` (not our child) exits within `timeout`, waited for on the
    /// system's own exit notification.
    #[cfg(target_os = "linux")]
    fn exits_within(pid: u32, timeout: std::time::Duration) -> bool {
        use rustix::event::{PollFd, PollFlags, poll};
        let Some(pid) = rustix::process::Pid::from_raw(pid as i32) else {
            return false;
        };
        let Ok(fd) = rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()) else {
            return true; // already gone
        };
        let mut fds = [PollFd::new(&fd, PollFlags::IN)];
        let timeout = rustix::event::Timespec::try_from(timeout).ok();
        poll(&mut fds, timeout.as_ref()).is_ok_and(|ready| ready > 0)
    }

    #[cfg(windows)]
    fn exits_within(pid: u32, timeout: std::time::Duration) -> bool {
        use windows_sys::Win32::Foundation::WAIT_OBJECT_0;
        use windows_sys::Win32::System::Threading::{
            OpenProcess, PROCESS_SYNCHRONIZE, WaitForSingleObject,
        };
        // SAFETY: a synchronize-only open, closed by Handle.
        let process = unsafe { OpenProcess(PROCESS_SYNCHRONIZE, 0, pid) };
        if process.is_null() {
            return true; // already gone
        }
        let process = crate::win::Handle(process);
        // SAFETY: an open process handle.
        unsafe { WaitForSingleObject(process.0, timeout.as_millis() as u32) == WAIT_OBJECT_0 }
    }

    #[tokio::test]
    async fn a_child_gets_its_pipe_on_descriptors_3_and_4_and_dies_when_killed() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let me = std::env::current_exe().unwrap();
        let args = [
            "--exact",
            "process::tests::pipe_child",
            "tabwire-pipe-child",
            "--nocapture",
        ]
        .map(String::from);
        let mut spawned = super::spawn_with_cdp_pipe(&me, &args).await.unwrap();
        spawned.to_browser.write_all(b"hello\0").await.unwrap();
        let mut answer = Vec::new();
        let mut byte = [0u8; 1];
        while spawned.from_browser.read_exact(&mut byte).await.is_ok() && byte[0] != 0 {
            answer.push(byte[0]);
        }
        assert_eq!(answer, b"echo hello");
        // It read all we wrote.
        #[cfg(target_os = "linux")]
        assert_eq!(spawned.backlog.unread(), Some(0));
        assert!(spawned.process.id().is_some());
        spawned.process.start_kill().unwrap();
        let how = spawned.process.wait().await.unwrap();
        assert!(how.starts_with("the browser process"), "{how}");
        // Its end of the pipe went with it.
        assert_eq!(spawned.from_browser.read(&mut byte).await.unwrap(), 0);
    }

    /// A browser that never reads: what we wrote stays in the pipe, after its death too,
    /// and the backlog says how much (where the system can).
    #[tokio::test]
    async fn what_a_killed_browser_never_read_stays_counted_in_its_pipe() {
        use tokio::io::AsyncWriteExt;
        let me = std::env::current_exe().unwrap();
        let args = [
            "--exact",
            "process::tests::pipe_child",
            "tabwire-pipe-child",
            "tabwire-pipe-stubborn",
            "--nocapture",
        ]
        .map(String::from);
        let mut spawned = super::spawn_with_cdp_pipe(&me, &args).await.unwrap();
        spawned.to_browser.write_all(b"never read\0").await.unwrap();
        let expected = cfg!(target_os = "linux").then_some(11);
        assert_eq!(spawned.backlog.unread(), expected);
        spawned.process.start_kill().unwrap();
        spawned.process.wait().await.unwrap();
        assert_eq!(spawned.backlog.unread(), expected);
    }

    #[test]
    fn windows_arguments_are_quoted_as_the_c_runtime_splits_them() {
        assert_eq!(q("--headless"), "--headless");
        assert_eq!(q(""), "\"\"");
        assert_eq!(q(r"C:\Program Files\x"), r#""C:\Program Files\x""#);
        assert_eq!(
            q(r"--user-data-dir=C:\a b\"),
            r#""--user-data-dir=C:\a b\\""#
        );
        assert_eq!(q(r#"say "hi""#), r#""say \"hi\"""#);
        assert_eq!(q(r#"a\"b c"#), r#""a\\\"b c""#);
        assert_eq!(q(r"a\\b"), r"a\\b");
    }
}
