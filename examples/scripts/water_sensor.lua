-- Water sensor: water_enter / water_exit / water_stay events for one moving point.
--
-- A game engine would attach this to an entity and send the events through its event bus
-- (the engine this follows uses demi.events); here each event goes to an on_event callback,
-- which by default prints one line. The rest is the engine's contract: the sampled point is
-- the entity's position raised by offset_y, emit_stay = false keeps only the transitions,
-- and the payload carries entity_id and water (the WaterSample).
--
-- As a module (require("water_sensor") with examples/scripts on package.path):
--   local sensor = WaterSensor.new("boat", {offset_y = 0.5, emit_stay = false,
--                                           on_event = function(name, payload) ... end})
--   sensor:update(x, y, z)   -- once per fixed step; nil coordinates reset the sensor
--
-- As a script, it walks a point in a straight line through the payloads given to terrane lua:
--   terrane lua examples/scripts/water_sensor.lua lake.terrain.bin \
--       --arg FROM_X --arg FROM_Y --arg FROM_Z --arg TO_X --arg TO_Y --arg TO_Z --arg STEPS \
--       [--arg OFFSET_Y] [--arg nostay]
-- (defaults: from (0, 2, 32) to (64, 2, 32) in 16 steps, offset_y 0, stay events on).

local Water = require("terrane.water")

local WaterSensor = {}
WaterSensor.__index = WaterSensor

-- One line per event: the name, the entity, the body and the depth of its column.
local function print_event(name, payload)
    local w = payload.water
    print(string.format("%s entity=%s terrain=%s body=%s kind=%s depth=%.2f underwater=%s", name,
                        payload.entity_id, w.terrain_id, w.body_id, w.kind, w.depth,
                        tostring(w.underwater)))
end

function WaterSensor.new(entity_id, options)
    options = options or {}
    local self = setmetatable({}, WaterSensor)
    self.entity_id = entity_id
    self.offset_y = options.offset_y or 0
    self.emit_stay = options.emit_stay ~= false
    self.on_event = options.on_event or print_event
    self.tracker = Water.tracker(options.terrain_id)
    return self
end

-- Track the entity at (x, y, z); a missing position (a destroyed or detached entity) forgets
-- the water without an event, as the engine's sensor does.
function WaterSensor:update(x, y, z)
    if x == nil or y == nil or z == nil then
        self.tracker:reset()
        self.underwater = false
        return
    end
    for _, event in ipairs(self.tracker:update({x, y + self.offset_y, z})) do
        if event.phase ~= "stay" or self.emit_stay then
            self.on_event("water_" .. event.phase, {entity_id = self.entity_id, water = event.sample})
        end
    end
    self.underwater = self.tracker:current() ~= nil
end

-- Run by `terrane lua` (arg[0] is this file): walk the line and print the events.
if arg and arg[0] and arg[0]:match("water_sensor%.lua$") then
    local v = {}
    for i = 1, 7 do
        v[i] = tonumber(arg[i])
        if arg[i] ~= nil and v[i] == nil then
            error(string.format("argument %d: a number expected, got '%s'", i, arg[i]))
        end
    end
    local from = {v[1] or 0, v[2] or 2, v[3] or 32}
    local to = {v[4] or 64, v[5] or 2, v[6] or 32}
    local steps = math.tointeger(v[7] or 16)
    if steps == nil or steps < 1 then error("STEPS: a whole number >= 1 expected") end
    local step = 0
    local sensor = WaterSensor.new("probe", {
        offset_y = tonumber(arg[8]) or 0,
        emit_stay = arg[9] ~= "nostay",
        on_event = function(name, payload)
            io.write(string.format("step %d: ", step))
            print_event(name, payload)
        end,
    })
    for k = 0, steps do
        step = k
        local t = k / steps
        sensor:update(from[1] + (to[1] - from[1]) * t, from[2] + (to[2] - from[2]) * t,
                      from[3] + (to[3] - from[3]) * t)
    end
end

return WaterSensor
