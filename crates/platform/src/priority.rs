//! Background work that yields the CPU: the calling thread's scheduling priority lowered
//! (Linux: the thread's nice value, which Linux keeps per thread; Windows:
//! `THREAD_PRIORITY_LOWEST`; macOS: left as is, since `setpriority` there would lower
//! the whole process).

/// Lowers the calling thread's priority, so the work it does waits for everything else.
pub fn lower_this_thread() -> std::io::Result<()> {
    imp::lower_this_thread()
}

#[cfg(target_os = "linux")]
mod imp {
    /// The nice value background threads take (0 is normal, 19 the lowest).
    const BACKGROUND_NICE: i32 = 10;

    pub fn lower_this_thread() -> std::io::Result<()> {
        let thread = rustix::thread::gettid();
        rustix::process::setpriority_process(Some(thread), BACKGROUND_NICE)
            .map_err(std::io::Error::from)
    }
}

#[cfg(all(unix, not(target_os = "linux")))]
mod imp {
    pub fn lower_this_thread() -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(windows)]
mod imp {
    use windows_sys::Win32::System::Threading::{
        GetCurrentThread, SetThreadPriority, THREAD_PRIORITY_LOWEST,
    };

    pub fn lower_this_thread() -> std::io::Result<()> {
        // SAFETY: GetCurrentThread returns a pseudo-handle valid for this call.
        let ok = unsafe { SetThreadPriority(GetCurrentThread(), THREAD_PRIORITY_LOWEST) };
        if ok == 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_thread_can_lower_itself_and_others_keep_their_priority() {
        std::thread::spawn(|| super::lower_this_thread().expect("lowered"))
            .join()
            .expect("the thread ran");
        #[cfg(target_os = "linux")]
        assert_eq!(
            rustix::process::getpriority_process(None).expect("own priority"),
            0,
            "the process (its main thread) keeps its priority"
        );
    }
}
