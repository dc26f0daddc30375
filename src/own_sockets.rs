//! This process's TCP sockets, each read from its own descriptor: its local address,
//! whether it listens, and, for an established connection, its peer. Asking a descriptor
//! takes microseconds; `/proc/net/tcp{,6}` lists every socket of the machine by walking the
//! kernel's whole connection table — ≈5 ms a read on a machine whose table has 262,144
//! buckets, whatever few sockets it holds — which every watch paid at its start. Linux
//! only: the module is compiled with `linux_reads` alone, as its readers are.

use std::net::SocketAddr;

/// One TCP socket this process holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct OwnSocket {
    /// Its descriptor.
    pub(crate) fd: i32,
    /// Its local address.
    pub(crate) local: SocketAddr,
    /// Whether it accepts connections.
    pub(crate) listening: bool,
    /// The other end of an established connection.
    pub(crate) peer: Option<SocketAddr>,
}

/// Every TCP socket this process holds now (IPv4 and IPv6).
pub(crate) fn tcp_sockets() -> Vec<OwnSocket> {
    let Ok(descriptors) = std::fs::read_dir("/proc/self/fd") else {
        return Vec::new();
    };
    descriptors
        .flatten()
        .filter(|entry| {
            std::fs::read_link(entry.path())
                .is_ok_and(|link| link.to_string_lossy().starts_with("socket:["))
        })
        .filter_map(|entry| entry.file_name().to_str()?.parse::<libc::c_int>().ok())
        .filter_map(tcp_socket)
        .collect()
}

/// Descriptor `fd`, where it is a TCP socket of IPv4 or IPv6.
fn tcp_socket(fd: libc::c_int) -> Option<OwnSocket> {
    if int_option(fd, libc::SOL_SOCKET, libc::SO_PROTOCOL)? != libc::IPPROTO_TCP {
        return None;
    }
    let local = socket_address(&address_of(fd, libc::getsockname)?)?;
    let listening = int_option(fd, libc::SOL_SOCKET, libc::SO_ACCEPTCONN)? != 0;
    // Only an established connection's peer: one the other end closed (CLOSE_WAIT) still
    // names its peer, and goes nowhere now.
    let established = !listening && tcp_state(fd) == Some(ESTABLISHED);
    let peer = established
        .then(|| address_of(fd, libc::getpeername))
        .flatten()
        .as_ref()
        .and_then(socket_address);
    Some(OwnSocket {
        fd,
        local,
        listening,
        peer,
    })
}

/// `TCP_ESTABLISHED` of the kernel's `tcp_states.h`.
const ESTABLISHED: u8 = 1;

/// An `int` socket option of `fd`.
fn int_option(fd: libc::c_int, level: libc::c_int, name: libc::c_int) -> Option<libc::c_int> {
    let mut value: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: an int-sized buffer, as the options read here take.
    let asked = unsafe { libc::getsockopt(fd, level, name, (&raw mut value).cast(), &mut len) };
    (asked == 0).then_some(value)
}

/// The TCP state of `fd` (`TCP_INFO`'s `tcpi_state`).
fn tcp_state(fd: libc::c_int) -> Option<u8> {
    // SAFETY: an all-zero `tcp_info` is a valid value of a plain C struct.
    let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    // SAFETY: the buffer and its length are the kernel's to fill.
    let asked = unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&raw mut info).cast(),
            &mut len,
        )
    };
    (asked == 0).then_some(info.tcpi_state)
}

/// One of `fd`'s addresses, as `get` (`getsockname`, `getpeername`) reads it.
pub(crate) fn address_of(
    fd: libc::c_int,
    get: unsafe extern "C" fn(
        libc::c_int,
        *mut libc::sockaddr,
        *mut libc::socklen_t,
    ) -> libc::c_int,
) -> Option<libc::sockaddr_storage> {
    // SAFETY: an all-zero sockaddr_storage is a valid buffer for any address.
    let mut storage: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
    // SAFETY: the buffer and its length are the kernel's to fill.
    let got = unsafe { get(fd, (&raw mut storage).cast(), &mut len) };
    (got == 0).then_some(storage)
}

/// An IPv4 or IPv6 address read from the kernel; an IPv4 peer of a dual-stack socket
/// reads as the IPv4 address it is.
pub(crate) fn socket_address(storage: &libc::sockaddr_storage) -> Option<SocketAddr> {
    match libc::c_int::from(storage.ss_family) {
        libc::AF_INET => {
            // SAFETY: the family says the buffer holds a sockaddr_in.
            let v4 =
                unsafe { &*(storage as *const libc::sockaddr_storage).cast::<libc::sockaddr_in>() };
            Some(SocketAddr::from((
                u32::from_be(v4.sin_addr.s_addr).to_be_bytes(),
                u16::from_be(v4.sin_port),
            )))
        }
        libc::AF_INET6 => {
            // SAFETY: the family says the buffer holds a sockaddr_in6.
            let v6 = unsafe {
                &*(storage as *const libc::sockaddr_storage).cast::<libc::sockaddr_in6>()
            };
            let ip = std::net::Ipv6Addr::from(v6.sin6_addr.s6_addr);
            let port = u16::from_be(v6.sin6_port);
            Some(match ip.to_ipv4_mapped() {
                Some(v4) => SocketAddr::from((v4, port)),
                None => SocketAddr::from((ip, port)),
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A listener, a connection to it and its accepted end, each read from its descriptor:
    /// the listener listens, both ends of the connection name each other.
    #[test]
    fn a_listener_and_both_ends_of_a_connection_are_read() {
        use std::os::fd::AsRawFd;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a listener");
        let client =
            std::net::TcpStream::connect(listener.local_addr().unwrap()).expect("a connection");
        let (server, _) = listener.accept().expect("accepted");
        let sockets = tcp_sockets();
        let of = |fd: i32| sockets.iter().find(|s| s.fd == fd).copied();
        let listening = of(listener.as_raw_fd()).expect("the listener read");
        assert!(listening.listening && listening.peer.is_none());
        let (client, server) = (
            of(client.as_raw_fd()).expect("the client's end"),
            of(server.as_raw_fd()).expect("the server's end"),
        );
        assert_eq!(client.peer, Some(server.local));
        assert_eq!(server.peer, Some(client.local));
        assert!(!client.listening && !server.listening);
    }
}
