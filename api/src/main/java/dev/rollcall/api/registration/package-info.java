/**
 * The worker side of a discovery backend: how a worker puts itself into the discovery that
 * coordinators watch, and takes itself out again.
 */
package dev.rollcall.api.registration;
