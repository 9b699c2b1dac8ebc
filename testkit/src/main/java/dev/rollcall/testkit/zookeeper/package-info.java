/**
 * A real ZooKeeper server in this JVM ({@link dev.rollcall.testkit.zookeeper.ZooKeeperServer}), for
 * tests of the zookeeper discovery backend and of users' own code. Needs
 * {@code org.apache.zookeeper:zookeeper} on the test class path (an optional dependency of the testkit).
 */
package dev.rollcall.testkit.zookeeper;
