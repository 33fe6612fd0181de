/*
 * mlc-tune.c - the mlc-tune program: tune the functions of a TVMScript file
 * for a target and store every measurement in the database (see
 * docs/mlc-tune.md). Everything it does is in search/tune/cmd_tune*.c.
 */
#include "search/tune/cmd_tune.h"

int main(int argc, char **argv) { return mlc_tune_main(argc, argv); }
