/** The version-policy SPI: which probed workers may be used together. */
package dev.rollcall.api.policy;
