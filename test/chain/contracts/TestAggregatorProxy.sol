// SPDX-License-Identifier: MIT
pragma solidity 0.8.19;

interface IAggregator {
    function decimals() external view returns (uint8);
    function description() external view returns (string memory);
    function latestRoundData() external view returns (uint80, int256, uint256, uint256, uint80);
}

/// A feed proxy shaped like Chainlink's EACAggregatorProxy, for the local-chain tests: it reads
/// its aggregator, and its round ids carry the phase in their top bits (phase << 64 | round).
contract TestAggregatorProxy {
    address public aggregator;
    uint16 public phaseId;

    constructor(address aggregator_, uint16 phaseId_) {
        aggregator = aggregator_;
        phaseId = phaseId_;
    }

    /// A new aggregator, as Chainlink's proxies change phase: the round ids start over under it.
    function setAggregator(address aggregator_, uint16 phaseId_) external {
        aggregator = aggregator_;
        phaseId = phaseId_;
    }

    function decimals() external view returns (uint8) {
        return IAggregator(aggregator).decimals();
    }

    function description() external view returns (string memory) {
        return IAggregator(aggregator).description();
    }

    function latestRoundData() external view returns (uint80, int256, uint256, uint256, uint80) {
        (uint80 round, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredIn) =
            IAggregator(aggregator).latestRoundData();
        uint80 phased = uint80((uint256(phaseId) << 64) | round);
        answeredIn;
        return (phased, answer, startedAt, updatedAt, phased);
    }
}
