//! Local sockets between tabwire processes of one user: the broker's, and the extension
//! link's (the native host to the engine's owner).
//!
//! - Unix: a Unix socket in the private runtime dir ([`runtime_dir`], 0700 and ours),
//!   mode 0600, and every connection's peer uid checked.
//! - Windows: a named pipe `\\.\pipe\tabwire-<SID>-<name>` whose DACL admits this user
//!   alone and which refuses remote clients. The server checks each client's user, and a
//!   client checks the server's, so a pipe another user made first under our name is
//!   never talked to.

use std::io;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Where one local socket lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    #[cfg(unix)]
    path: PathBuf,
    #[cfg(windows)]
    pipe: String,
}

impl Endpoint {
    /// The socket `name` of this user (`broker-<key>`, `extension-link`).
    pub fn named(name: &str) -> io::Result<Endpoint> {
        #[cfg(unix)]
        {
            Ok(Endpoint {
                path: runtime_dir()?.join(format!("{name}.sock")),
            })
        }
        #[cfg(windows)]
        {
            Ok(Endpoint {
                pipe: format!(r"\\.\pipe\tabwire-{}-{name}", crate::user::id()),
            })
        }
    }

    /// As a user would look for it.
    pub fn display(&self) -> String {
        #[cfg(unix)]
        {
            self.path.display().to_string()
        }
        #[cfg(windows)]
        {
            self.pipe.clone()
        }
    }
}

/// The private runtime dir, for sockets, locks and logs: `$XDG_RUNTIME_DIR/tabwire`
/// (else `/tmp/tabwire-<uid>`; on macOS under the per-user `$TMPDIR`), created 0700 and
/// refused if another user owns it or others can enter it. On Windows
/// `%LOCALAPPDATA%\tabwire\run`, private to the user by the profile's own ACL.
pub fn runtime_dir() -> io::Result<PathBuf> {
    let dir = crate::dirs::runtime_base();
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt, MetadataExt};
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)
            .map_err(|e| annotate(e, &dir, "cannot create the runtime dir"))?;
        let meta = std::fs::symlink_metadata(&dir)?;
        let uid = rustix::process::getuid().as_raw();
        if !meta.is_dir() || meta.uid() != uid || meta.mode() & 0o077 != 0 {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "the runtime dir {} must be a directory owned by uid {uid} with mode 0700",
                    dir.display()
                ),
            ));
        }
    }
    #[cfg(windows)]
    std::fs::create_dir_all(&dir)
        .map_err(|e| annotate(e, &dir, "cannot create the runtime dir"))?;
    Ok(dir)
}

fn annotate(error: io::Error, path: &Path, what: &str) -> io::Error {
    io::Error::new(error.kind(), format!("{what} {}: {error}", path.display()))
}

/// A bound local socket.
pub struct Listener {
    #[cfg(unix)]
    inner: tokio::net::UnixListener,
    #[cfg(windows)]
    inner: windows::PipeListener,
}

impl Listener {
    /// Listens at `endpoint`. A Unix socket left by a process that is gone is replaced:
    /// callers hold the endpoint's lock, so nobody else serves it.
    pub fn bind(endpoint: &Endpoint) -> io::Result<Listener> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::remove_file(&endpoint.path);
            let inner = tokio::net::UnixListener::bind(&endpoint.path)
                .map_err(|e| annotate(e, &endpoint.path, "cannot listen on"))?;
            std::fs::set_permissions(&endpoint.path, std::fs::Permissions::from_mode(0o600))?;
            Ok(Listener { inner })
        }
        #[cfg(windows)]
        {
            Ok(Listener {
                inner: windows::PipeListener::bind(&endpoint.pipe)?,
            })
        }
    }

    /// The next connection: Some for one of this user's processes, None for a connection
    /// refused because another user made it.
    pub async fn accept(&mut self) -> io::Result<Option<Stream>> {
        #[cfg(unix)]
        {
            let (stream, _) = self.inner.accept().await?;
            let uid = rustix::process::getuid().as_raw();
            let same_user = stream.peer_cred().is_ok_and(|cred| cred.uid() == uid);
            Ok(same_user.then_some(Stream { inner: stream }))
        }
        #[cfg(windows)]
        {
            Ok(self.inner.accept().await?.map(|inner| Stream { inner }))
        }
    }
}

impl Endpoint {
    /// Removes what a listener left behind (the socket file; nothing for a pipe).
    pub fn remove(&self) {
        #[cfg(unix)]
        let _ = std::fs::remove_file(&self.path);
    }
}

/// A connection on a local socket: bytes both ways.
pub struct Stream {
    #[cfg(unix)]
    inner: tokio::net::UnixStream,
    #[cfg(windows)]
    inner: windows::PipeStream,
}

impl Stream {
    /// Connects to `endpoint`; fails at once if nobody listens there (or, on Windows, if
    /// the pipe belongs to another user).
    pub async fn connect(endpoint: &Endpoint) -> io::Result<Stream> {
        #[cfg(unix)]
        {
            Ok(Stream {
                inner: tokio::net::UnixStream::connect(&endpoint.path).await?,
            })
        }
        #[cfg(windows)]
        {
            Ok(Stream {
                inner: windows::PipeStream::connect(&endpoint.pipe).await?,
            })
        }
    }
}

impl AsyncRead for Stream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(windows)]
mod windows {
    use std::io;
    use std::os::windows::io::AsRawHandle;
    use std::pin::Pin;
    use std::task::{Context, Poll};

    use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
    use tokio::net::windows::named_pipe::{
        ClientOptions, NamedPipeClient, NamedPipeServer, ServerOptions,
    };
    use windows_sys::Win32::Foundation::ERROR_PIPE_BUSY;
    use windows_sys::Win32::System::Pipes::{
        GetNamedPipeClientProcessId, GetNamedPipeServerProcessId,
    };

    /// The pipe's next instance, waiting for a client.
    pub(super) struct PipeListener {
        name: String,
        next: NamedPipeServer,
    }

    fn instance(name: &str, first: bool) -> io::Result<NamedPipeServer> {
        let security = crate::win::Security::this_user_only()?;
        let mut options = ServerOptions::new();
        options
            .first_pipe_instance(first)
            .reject_remote_clients(true);
        // SAFETY: the attributes and their descriptor outlive the call.
        unsafe {
            options.create_with_security_attributes_raw(
                name,
                &security.attributes as *const _ as *mut core::ffi::c_void,
            )
        }
        .map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot create the pipe {name}: {e} (another process may hold it)"),
            )
        })
    }

    impl PipeListener {
        pub(super) fn bind(name: &str) -> io::Result<PipeListener> {
            Ok(PipeListener {
                name: name.to_owned(),
                next: instance(name, true)?,
            })
        }

        pub(super) async fn accept(&mut self) -> io::Result<Option<PipeStream>> {
            self.next.connect().await?;
            let connected = std::mem::replace(&mut self.next, instance(&self.name, false)?);
            let mut pid = 0u32;
            // SAFETY: a connected pipe handle; pid receives the client's process id.
            let known =
                unsafe { GetNamedPipeClientProcessId(connected.as_raw_handle() as _, &mut pid) }
                    != 0;
            Ok((known && same_user(pid)).then_some(PipeStream::Server(connected)))
        }
    }

    fn same_user(pid: u32) -> bool {
        match (
            crate::win::current_user_sid(),
            crate::win::process_user_sid(pid),
        ) {
            (Ok(me), Ok(them)) => me.equals(&them),
            _ => false,
        }
    }

    pub(super) enum PipeStream {
        Server(NamedPipeServer),
        Client(NamedPipeClient),
    }

    impl PipeStream {
        pub(super) async fn connect(name: &str) -> io::Result<PipeStream> {
            // Every instance busy: another is made as each client is accepted; try again
            // for a moment.
            let mut busy_rounds = 0;
            let client = loop {
                match ClientOptions::new().open(name) {
                    Ok(client) => break client,
                    Err(e)
                        if e.raw_os_error() == Some(ERROR_PIPE_BUSY as i32)
                            && busy_rounds < 100 =>
                    {
                        busy_rounds += 1;
                        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                    }
                    Err(e) => return Err(e),
                }
            };
            let mut pid = 0u32;
            // SAFETY: a connected pipe handle; pid receives the server's process id.
            let known =
                unsafe { GetNamedPipeServerProcessId(client.as_raw_handle() as _, &mut pid) } != 0;
            if !(known && same_user(pid)) {
                return Err(io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    format!("{name} is served by another user's process; refusing to talk to it"),
                ));
            }
            Ok(PipeStream::Client(client))
        }
    }

    macro_rules! both {
        ($self:ident, $pipe:ident => $call:expr) => {
            match $self.get_mut() {
                PipeStream::Server($pipe) => $call,
                PipeStream::Client($pipe) => $call,
            }
        };
    }

    impl AsyncRead for PipeStream {
        fn poll_read(
            self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &mut ReadBuf<'_>,
        ) -> Poll<io::Result<()>> {
            both!(self, pipe => Pin::new(pipe).poll_read(cx, buf))
        }
    }

    impl AsyncWrite for PipeStream {
        fn poll_write(
            self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<io::Result<usize>> {
            both!(self, pipe => Pin::new(pipe).poll_write(cx, buf))
        }

        fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            both!(self, pipe => Pin::new(pipe).poll_flush(cx))
        }

        fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
            both!(self, pipe => Pin::new(pipe).poll_shutdown(cx))
        }
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    use super::*;

    #[tokio::test]
    async fn a_client_of_this_user_is_served_both_ways() {
        let endpoint = Endpoint::named(&format!("test-{}", std::process::id())).unwrap();
        let mut listener = Listener::bind(&endpoint).unwrap();
        let server = tokio::spawn(async move {
            let stream = listener.accept().await.unwrap().expect("same user");
            let (read, mut write) = tokio::io::split(stream);
            let mut line = String::new();
            BufReader::new(read).read_line(&mut line).await.unwrap();
            write
                .write_all(format!("echo {line}").as_bytes())
                .await
                .unwrap();
            write.flush().await.unwrap();
            // A second client after the first: the listener made a new instance.
            listener.accept().await.unwrap().expect("second client")
        });
        let client = Stream::connect(&endpoint).await.unwrap();
        let (read, mut write) = tokio::io::split(client);
        write.write_all(b"hello\n").await.unwrap();
        let mut answer = String::new();
        BufReader::new(read).read_line(&mut answer).await.unwrap();
        assert_eq!(answer, "echo hello\n");
        let _second = Stream::connect(&endpoint).await.unwrap();
        server.await.unwrap();
        endpoint.remove();
    }

    #[tokio::test]
    async fn nobody_listening_fails_at_once() {
        let endpoint = Endpoint::named(&format!("nobody-{}", std::process::id())).unwrap();
        assert!(Stream::connect(&endpoint).await.is_err());
    }
}
