/**
 * A launcher for a real etcd server on loopback ({@link dev.rollcall.testkit.etcd.EtcdServer}), for
 * tests of the etcd discovery backend and of users' own code that registers or watches workers.
 */
package dev.rollcall.testkit.etcd;
