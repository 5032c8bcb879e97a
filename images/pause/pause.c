/* The Pod sandbox's process: holds the Pod's namespaces open and does nothing else.
 * It reaps any child it inherits (it is PID 1 of the sandbox) and exits 0 on SIGINT/SIGTERM,
 * so a sandbox stops at once instead of waiting out the kill grace period. */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void stop(int sig) { (void)sig; _exit(0); }

static void reap(int sig) {
  (void)sig;
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
}

int main(void) {
  struct sigaction on_stop = {.sa_handler = stop};
  struct sigaction on_child = {.sa_handler = reap, .sa_flags = SA_NOCLDSTOP | SA_RESTART};
  if (sigaction(SIGINT, &on_stop, NULL) != 0 || sigaction(SIGTERM, &on_stop, NULL) != 0 ||
      sigaction(SIGCHLD, &on_child, NULL) != 0) {
    return 1;
  }
  for (;;) pause();
}
