// Package serial captures serial links for dissect: it reads UART lines as
// [capture.Packet] values, one per read, in the order the reads completed.
//
// A serial link is one stream with two directions: host→device
// ([capture.DirOutbound]) and device→host ([capture.DirInbound]). Every
// packet carries link type [capture.LinkUser0], the link's name in
// InterfaceName (the device path; for a two-port tap the two paths joined by
// "+"), its direction and the bytes of one read, so reassembly treats live
// reads and pcapng files written from them the same way.
//
// Two ways to get at a link's bytes:
//
//   - A tap ([OpenTap]) listens: one port whose RX pin is wired to the host's
//     TX line (host→device bytes), and/or one wired to the device's TX line
//     (device→host bytes). Nothing is sent.
//   - A proxy ([OpenProxy]) sits in the middle: it opens the real device,
//     creates a pseudo-terminal whose slave side the host application opens
//     (through a symlink) instead of the device, and forwards every read to
//     the other side before handing it on.
//
// Both are built on [Tap], which merges any number of [Input] readers, so
// everything can be tested with pseudo-terminals or in-memory readers.
// Reading goroutines never wait for the consumer, so the ports are drained
// at line speed (and a proxy keeps forwarding) whatever it does: reads are
// copied into a queue bounded in bytes (TapConfig.QueueBytes, default
// [DefaultQueueBytes]), and while it is full they are dropped, counted
// ([Tap.Stats]) and handed out as one packet with [capture.Packet.Dropped]
// set and the bytes dropped as its Length, which reassembly reports as a
// gap. Steady-state reading does not allocate.
package serial
