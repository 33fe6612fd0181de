/*
 * mlc-broker.c - the mlc-broker program: routes measurement jobs from
 * mlc-tune clients to mlc-workers by device key (docs/farm.md). Everything
 * it does is in rpc/cmd_broker.c.
 */
#include "rpc/cmd_broker.h"

int main(int argc, char **argv) { return mlc_broker_main(argc, argv); }
