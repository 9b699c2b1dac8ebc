/** The discovery SPI: backends that push the latest full set of candidate worker endpoints. */
package dev.rollcall.api.discovery;
