/**
 * A launcher for a real etcd server on loopback ({@link dev.rollcall.local.etcd.EtcdServer}): the
 * store behind {@code rollcall demo --discovery etcd}, and for tests of the etcd discovery backend
 * and of users' own code that registers or watches workers.
 */
package dev.rollcall.local.etcd;
