// SPDX-License-Identifier: MIT
pragma solidity 0.8.19;

/// A hostile oracle for the local-chain tests: anyone may create a Morpho market naming it, and
/// its price() burns all the gas it is given.
contract TestGasBurner {
    function price() external view returns (uint256) {
        uint256 n;
        while (gasleft() > 0) n++;
        return n;
    }
}
