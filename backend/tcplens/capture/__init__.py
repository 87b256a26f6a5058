"""Reader: pcap/pcapng (+gzip/zstd) bytes → columnar packet table. Pure; no I/O beyond what it is given."""
