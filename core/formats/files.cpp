// Reading documents with a size limit, and saving them so that a crash or a
// full disk never leaves a half-written file behind.

#include "formats/documents.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace sa {

namespace {

// Documents are small; anything bigger is a mistake (a trace, a core dump).
constexpr std::size_t kMaxDocumentBytes = 64u << 20;

std::string mib(std::size_t bytes) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1u << 20));
    return buf;
}

std::string tooLarge(const std::string& path, std::size_t bytes, bool atLeast) {
    return "cannot read '" + path + "': " + (atLeast ? "more than " : "") + mib(bytes) +
           " is larger than the limit of " + mib(kMaxDocumentBytes) + " for a document";
}

bool writeAll(int fd, const std::string& data) {
    const char* p = data.data();
    std::size_t left = data.size();
    while (left > 0) {
        const ssize_t n = ::write(fd, p, left);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return false;
        }
        p += n;
        left -= static_cast<std::size_t>(n);
    }
    return true;
}

} // namespace

std::optional<std::string> readTextFile(const std::string& path, std::string* error) {
    const auto fail = [&](const std::string& message) -> std::optional<std::string> {
        if (error)
            *error = message;
        return std::nullopt;
    };
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return fail("cannot read '" + path + "': " + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        const int e = errno;
        ::close(fd);
        return fail("cannot read '" + path + "': " + std::strerror(e));
    }
    if (S_ISDIR(st.st_mode)) {
        ::close(fd);
        return fail("cannot read '" + path + "': it is a directory");
    }
    if (S_ISREG(st.st_mode) && static_cast<std::uint64_t>(st.st_size) > kMaxDocumentBytes) {
        ::close(fd);
        return fail(tooLarge(path, static_cast<std::size_t>(st.st_size), false));
    }
    std::string text;
    if (S_ISREG(st.st_mode))
        text.reserve(static_cast<std::size_t>(st.st_size));
    char buf[1 << 16];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            const int e = errno;
            ::close(fd);
            return fail("cannot read '" + path + "': " + std::strerror(e));
        }
        if (n == 0)
            break;
        text.append(buf, static_cast<std::size_t>(n));
        // Pipes and devices have no size up front; stop at the limit.
        if (text.size() > kMaxDocumentBytes) {
            ::close(fd);
            return fail(tooLarge(path, kMaxDocumentBytes, true));
        }
    }
    ::close(fd);
    return text;
}

std::string saveFileAtomically(const std::string& path, const std::string& contents) {
    namespace fs = std::filesystem;
    std::error_code ec;
    // Replace what a symbolic link points at, not the link.
    fs::path target(path);
    if (fs::is_symlink(target, ec)) {
        const fs::path resolved = fs::weakly_canonical(target, ec);
        if (!ec)
            target = resolved;
    }
    const std::string targetName = target.string();
    const auto fail = [&](const std::string& what, int e) {
        return "cannot write '" + path + "': " + what +
               (e ? std::string(": ") + std::strerror(e) : "");
    };

    // Keep the permissions of the file being replaced.
    mode_t mode = 0644;
    struct stat st {};
    if (::stat(targetName.c_str(), &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return fail("it is a directory", 0);
        mode = st.st_mode & 07777;
    }

    std::string temp = targetName + ".tmp-XXXXXX";
    const int fd = ::mkstemp(temp.data());
    if (fd < 0)
        return fail("cannot create a temporary file next to it", errno);
    const auto abandon = [&](const std::string& what) {
        const int e = errno;
        ::close(fd);
        ::unlink(temp.c_str());
        return fail(what, e);
    };
    if (::fchmod(fd, mode) != 0)
        return abandon("cannot set permissions");
    if (!writeAll(fd, contents))
        return abandon("write failed");
    if (::fsync(fd) != 0)
        return abandon("fsync failed");
    if (::close(fd) != 0) {
        const int e = errno;
        ::unlink(temp.c_str());
        return fail("close failed", e);
    }
    if (::rename(temp.c_str(), targetName.c_str()) != 0) {
        const int e = errno;
        ::unlink(temp.c_str());
        return fail("cannot replace it", e);
    }
    // Make the rename itself durable.
    fs::path dir = target.parent_path();
    if (dir.empty())
        dir = ".";
    const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        ::fsync(dfd);
        ::close(dfd);
    }
    return {};
}

} // namespace sa
