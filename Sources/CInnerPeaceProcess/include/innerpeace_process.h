#ifndef INNERPEACE_PROCESS_H
#define INNERPEACE_PROCESS_H

// Render worker processes: the spawn on the server side and the set-up on the worker side. In C
// because posix_spawn's file actions and prctl (variadic) are awkward or impossible from Swift.

#include <stddef.h>
#include <sys/types.h>

/// Spawns `path` with `argv` and `envp` (both NULL-terminated): `channel` becomes the child's
/// stdin and stdout, `error_output` its stderr (or, when it is -1, stderr is inherited),
/// `body_file` its descriptor 3 (when it is -1, the child has none), every other descriptor is
/// closed in the child, and SIGPIPE, SIGINT and SIGTERM start with their default actions and an
/// empty signal mask. Returns 0 and sets `*pid`, or an errno value.
int innerpeace_spawn_worker(const char *path, char *const argv[], char *const envp[], int channel, int error_output,
                            int body_file, pid_t *pid);

/// An anonymous file in memory (Linux's memfd_create, close-on-exec) for a worker to leave each
/// card's bytes in for the server. Returns the descriptor, or -1 with errno set (ENOSYS where
/// there is no such call).
int innerpeace_body_file_create(void);

/// In a worker, first thing: be killed (SIGKILL) when the thread that spawned us ends, and ignore
/// SIGINT and SIGTERM (the server drains, then stops its workers by closing their stdin).
/// Returns 0, or -1 when `parent` (if above 0) is no longer our parent: it died before the
/// death signal was armed.
int innerpeace_worker_prepare(pid_t parent);

/// A descriptor that becomes readable when process `pid` (a child) ends, for the server to reap
/// it the moment it does (Linux's pidfd_open, which glibc 2.36 has no Swift-visible prototype
/// for). Returns the descriptor (close-on-exec), or -1 with errno set.
int innerpeace_pidfd_open(pid_t pid);
/// A pipe whose two ends are close-on-exec from the start (pipe2 with O_CLOEXEC, which needs
/// _GNU_SOURCE and so has no Swift-visible prototype): for a worker's stderr. Returns 0, or -1
/// with errno set.
int innerpeace_pipe_cloexec(int ends[2]);

/// In a worker: glibc's allocator serves every buffer below `threshold` bytes from the heap (not
/// from a mapping of its own, which is unmapped when freed and faults in anew, page by page, when
/// the next card asks again), and keeps up to `threshold` bytes free at the top of the heap
/// instead of returning them at each free. Returns 1 when both were set; 0 elsewhere.
int innerpeace_worker_heap_reserve(int threshold);
/// The bytes the heap holds free (glibc's mallinfo2 `fordblks`, every arena); 0 elsewhere.
size_t innerpeace_heap_free_bytes(void);
/// glibc's malloc_trim(0): gives the free memory of every arena back to the system. No-op elsewhere.
void innerpeace_heap_trim(void);

#endif
