/** The consul discovery backend: an empty shell until its own issue lands; see this module's README. */
package dev.rollcall.discovery.consul;
