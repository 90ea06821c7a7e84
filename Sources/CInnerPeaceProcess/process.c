#define _GNU_SOURCE
#include "innerpeace_process.h"

#include <signal.h>
#include <spawn.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#include <sys/syscall.h>
#endif
#include <errno.h>
#include <fcntl.h>
#ifdef __linux__
#include <sys/mman.h>
#endif
#if defined(__GLIBC__)
#include <malloc.h>
#endif

int innerpeace_spawn_worker(const char *path, char *const argv[], char *const envp[], int channel, int error_output,
                            int body_file, pid_t *pid) {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attributes;
  int status = posix_spawn_file_actions_init(&actions);
  if (status != 0) return status;
  status = posix_spawnattr_init(&attributes);
  if (status != 0) {
    posix_spawn_file_actions_destroy(&actions);
    return status;
  }
  sigset_t defaults, empty;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  sigemptyset(&empty);
  if ((status = posix_spawnattr_setsigdefault(&attributes, &defaults)) == 0 &&
      (status = posix_spawnattr_setsigmask(&attributes, &empty)) == 0 &&
      (status = posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK)) == 0 &&
      (status = posix_spawn_file_actions_adddup2(&actions, channel, 0)) == 0 &&
      (status = posix_spawn_file_actions_adddup2(&actions, channel, 1)) == 0 &&
      (error_output < 0 || (status = posix_spawn_file_actions_adddup2(&actions, error_output, 2)) == 0) &&
      (body_file < 0 || (status = posix_spawn_file_actions_adddup2(&actions, body_file, 3)) == 0)
#ifdef __linux__
      && (status = posix_spawn_file_actions_addclosefrom_np(&actions, body_file < 0 ? 3 : 4)) == 0
#endif
  ) {
    status = posix_spawn(pid, path, &actions, &attributes, argv, envp);
  }
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  return status;
}

int innerpeace_worker_prepare(pid_t parent) {
  signal(SIGINT, SIG_IGN);
  signal(SIGTERM, SIG_IGN);
#ifdef __linux__
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) return -1;
#endif
  if (parent > 0 && getppid() != parent) return -1;
  return 0;
}

int innerpeace_pidfd_open(pid_t pid) {
#if defined(__linux__) && defined(SYS_pidfd_open)
  return (int)syscall(SYS_pidfd_open, pid, 0);
#else
  errno = ENOSYS;
  return -1;
#endif
}

int innerpeace_body_file_create(void) {
#if defined(__linux__) && defined(MFD_CLOEXEC)
  return memfd_create("innerpeace-card", MFD_CLOEXEC);
#else
  errno = ENOSYS;
  return -1;
#endif
}

int innerpeace_pipe_cloexec(int ends[2]) { return pipe2(ends, O_CLOEXEC); }

int innerpeace_worker_heap_reserve(int threshold) {
#if defined(__GLIBC__)
  return mallopt(M_MMAP_THRESHOLD, threshold) == 1 && mallopt(M_TRIM_THRESHOLD, threshold) == 1;
#else
  (void)threshold;
  return 0;
#endif
}

size_t innerpeace_heap_free_bytes(void) {
#if defined(__GLIBC__)
  return mallinfo2().fordblks;
#else
  return 0;
#endif
}

void innerpeace_heap_trim(void) {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}
