// SPDX-License-Identifier: MIT
pragma solidity 0.8.19;

interface IFeed {
    function latestRoundData() external view returns (uint80, int256, uint256, uint256, uint80);
}

/// A Morpho oracle of the MorphoChainlinkOracleV2 shape (its getters and price formula, one
/// base feed and one quote feed, no vaults), for the local-chain tests.
contract TestChainlinkOracle {
    address public immutable BASE_FEED_1;
    address public constant BASE_FEED_2 = address(0);
    address public immutable QUOTE_FEED_1;
    address public constant QUOTE_FEED_2 = address(0);
    address public constant BASE_VAULT = address(0);
    address public constant QUOTE_VAULT = address(0);
    uint256 public immutable SCALE_FACTOR;

    /// scaleFactor = 10^(36 + loan decimals + quote feed decimals - collateral decimals - base feed decimals)
    constructor(address baseFeed, address quoteFeed, uint256 scaleFactor) {
        BASE_FEED_1 = baseFeed;
        QUOTE_FEED_1 = quoteFeed;
        SCALE_FACTOR = scaleFactor;
    }

    function price() external view returns (uint256) {
        (, int256 base,,,) = IFeed(BASE_FEED_1).latestRoundData();
        (, int256 quote,,,) = IFeed(QUOTE_FEED_1).latestRoundData();
        require(base > 0 && quote > 0, "negative answer");
        return SCALE_FACTOR * uint256(base) / uint256(quote);
    }
}
