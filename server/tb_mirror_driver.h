/*
 * tb_mirror_driver.h - `tributary --mirror mm2.properties [--clusters A ...]`:
 * MirrorMaker 2's dedicated mode (connect-mirror-maker.sh) from MM2's own
 * properties file. Each flow source->target that MM2 would run (enabled,
 * or with heartbeats) gets a distributed worker of its own, a child
 * process running this binary with a worker file the driver writes: its
 * Kafka the target, its group <source>-mm2 and its store the target's
 * topics mm2-configs.<source>.internal, mm2-offsets.<source>.internal and
 * mm2-status.<source>.internal, as MM2 names them, so that either takes
 * over from the other; its connectors (MirrorSourceConnector,
 * MirrorCheckpointConnector, MirrorHeartbeatConnector, the configs MM2
 * builds) a connectors.dir the worker's leader applies. docs/mirror.md,
 * "Dedicated mode".
 *
 * Ownership: borrows argv. Locking: none (one thread; the workers are
 * processes).
 */
#ifndef TB_MIRROR_DRIVER_H
#define TB_MIRROR_DRIVER_H

/* Runs the driver with the arguments after --mirror until SIGTERM or
 * SIGINT (passed on to every worker) or until a worker ends (the others
 * are stopped). Errors of the properties file name the key and its line.
 * Returns the exit status: 0 after a stop asked for, 1 on an error, 2 on a
 * usage error. */
int tb_mirror_driver_main(int argc, char **argv);

#endif
