// The subscriber socket's place on disk, made safe before the daemon binds there.
//
// The daemon runs as root and the socket's clients do not: any directory on the way to the
// socket that another user can write would let that user swap the socket (or a directory)
// for one of their own between the daemon's checks and its use of the path, and have the
// daemon serve, chown or remove the wrong file, or have clients connect to an impostor. So
// the daemon never follows a symbolic link that another user could have made, and every
// directory on the socket's path must be owned by root or the daemon's own user and not be
// writable by others (unless sticky, as /tmp: there no one can rename or remove another's
// entries).
#pragma once

#include <sys/un.h>

#include <string>

namespace rdma_eventd::daemon {

// Creates the socket's missing directories (0755) and checks every directory from / down to
// the socket's own, as above. Throws std::runtime_error naming the directory, its owner and
// mode, and why it is refused.
void prepare_socket_directory(const std::string& socket_path);

// Makes room at the path for a new socket: nothing there is fine, and a stale socket (one
// nobody listens on) of root's or the daemon's own user is removed. Throws std::runtime_error
// for a symbolic link, anything that is not a socket, another user's socket, or a socket that
// someone listens on: none of those is the daemon's to replace.
void clear_socket_path(const std::string& path, const sockaddr_un& addr);

}  // namespace rdma_eventd::daemon
