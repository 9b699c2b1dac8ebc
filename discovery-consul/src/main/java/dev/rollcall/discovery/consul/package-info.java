/** The consul discovery backend. Not implemented yet: see this module's README. */
package dev.rollcall.discovery.consul;
