/*
 * cmd_broker.h - the mlc-broker program as a library call, so tests can run
 * it in-process (rpc/cli/mlc-broker.c is a thin main over it). User guide:
 * docs/farm.md.
 */
#ifndef MLC_RPC_CMD_BROKER_H
#define MLC_RPC_CMD_BROKER_H

/* Runs `mlc-broker ARGS...` (argv[0] is the program name):
 *   mlc-broker [--bind ENDPOINT] [--curve-keys DIR] [--queue-bound N] [--log-stats S]
 *   mlc-broker stats ENDPOINT [--curve-keys DIR] [--json] [--timeout MS]
 *   mlc-broker keygen DIR NAME
 * Serving installs SIGINT and SIGTERM handlers and returns when one
 * arrives. Returns the exit status: 0 ok, 1 the work failed (the broker
 * stopped on an error, no stats reply, a key that exists), 2 bad usage or
 * bad input (unknown options, a bad endpoint or key directory). */
int mlc_broker_main(int argc, char **argv);

#endif /* MLC_RPC_CMD_BROKER_H */
