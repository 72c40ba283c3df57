import Benchmark
import JukeboxCore

/// In-process figures from issue 5: loading a 100 000-clip session, and one scheduler pick
/// from it (which must stay O(1) amortised, so a pick costs the same at 1 000 and 100 000 clips).
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(metrics: [.wallClock, .cpuTotal, .mallocCountTotal, .peakMemoryResident], maxDuration: .seconds(5))

    func sessionText(clips: Int) -> [UInt8] {
        let list = (0..<clips).map { #"{ "file": "clip-\#($0).wav", "weight": \#($0 % 3 + 1) }"# }.joined(separator: ",\n")
        return Array(#"{ "name": "large", "interval": { "min": "1s", "max": "2s" }, "clips": [\#n\#(list)\#n] }"#.utf8)
    }

    let large = sessionText(clips: 100_000)
    Benchmark("Load a 100 000-clip session", configuration: .init(maxIterations: 20)) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try SessionLoader.parse(large, path: "/bench/large.json"))
        }
    }

    for clips in [1_000, 100_000] {
        // A million picks per sample span several whole cycles (200 000 tickets at 100 000
        // clips), so each refill's O(n) shuffle is amortised as it is in a running daemon.
        Benchmark("Scheduler pick from \(clips) clips", configuration: .init(scalingFactor: .mega, maxIterations: 10)) { benchmark in
            var bag = ShuffleBag(weights: (0..<clips).map { $0 % 3 + 1 })
            var generator = SeededGenerator(seed: 42)
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                blackHole(bag.next(isEligible: { _ in true }, using: &generator))
            }
        }
    }
}
