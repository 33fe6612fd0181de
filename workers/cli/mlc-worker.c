/*
 * mlc-worker.c - the mlc-worker program: connect to a broker, announce this
 * machine's device, build and measure candidates until stopped (see
 * docs/mlc-worker.md). Everything it does is in workers/cmd_worker.c.
 */
#include "workers/cmd_worker.h"

int main(int argc, char **argv) { return mlc_worker_main(argc, argv); }
