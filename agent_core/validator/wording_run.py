"""Findings of the checks added for issue 15, in Chinese and English: grounding in the run's own
tool results, the physics of every leg, where the person is (the journey home, dates outside
the trip), currency, and plans written only as text."""

from __future__ import annotations

from agent_core.validator.wording import Phrase

# grounding: each item against what this run's tools returned
NOT_IN_RUN = Phrase("run.not_returned", "本次对话中没有任何工具返回过这个{what}", "no tool in this run returned this {what}")
RUN_RETURNED = Phrase("run.returned", "本次 {tool} 返回了：{seen}", "{tool} in this run returned: {seen}")
RUN_NOTHING = Phrase("run.nothing", "本次对话没有调用过 {tool}", "this run never called {tool}")
RUN_OTHER_DAY = Phrase("run.other_day", "本次查询中 {number} 只出现在 {days}，不是 {day}",
                       "{number} was returned in this run only for {days}, not for {day}")
RUN_RIDE = Phrase("run.ride", "本次 {tool}：{number} {origin} {depart} → {destination} {arrive}",
                  "{tool} in this run: {number} {origin} {depart} → {destination} {arrive}")
RUN_HOTEL = Phrase("run.hotel", "本次 hotel_search：{hotel_id} {name}，每晚 {price:g} 元",
                   "hotel_search in this run: {hotel_id} {name}, {price:g} CNY/night")
RUN_POI = Phrase("run.poi", "本次 {tool}：{poi_id} {name}，门票 {price:g} 元", "{tool} in this run: {poi_id} {name}, ticket {price:g} CNY")
WHAT_TRAIN = Phrase("what.train", "车次", "train")
WHAT_FLIGHT = Phrase("what.flight", "航班", "flight")
WHAT_HOTEL = Phrase("what.hotel", "酒店", "hotel")
WHAT_SIGHT = Phrase("what.sight", "地点", "place")

# physics: how long a leg of this mode and distance can take
TOO_FAST = Phrase("leg.too_fast", "{minutes} 分钟{kind} {km:.0f} 公里，平均 {speed:.0f} 公里/小时，超过{kind}的上限 {limit} 公里/小时",
                  "{km:.0f} km by {kind} in {minutes} min is {speed:.0f} km/h, above the {limit} km/h a {kind} can do")
TOO_SLOW = Phrase("leg.too_slow", "{kind} {km:.0f} 公里要 {minutes} 分钟，平均只有 {speed:.1f} 公里/小时，低于 {limit} 公里/小时",
                  "{km:.0f} km by {kind} taking {minutes} min is only {speed:.1f} km/h, below {limit} km/h")
NOT_AFTER = Phrase("leg.not_after", "到达时间不晚于出发时间", "it arrives no later than it leaves")
DISTANCE = Phrase("leg.distance", "{origin} → {destination} 直线约 {km:.0f} 公里（{how}）；出发 {depart}，到达 {arrive}",
                  "{origin} → {destination} is about {km:.0f} km ({how}); depart {depart}, arrive {arrive}")
BY_MAP = Phrase("how.map", "按地图坐标", "straight line on the map")
BY_ROUTE = Phrase("how.route", "route_plan 路程", "route_plan distance")

# whereabouts: where the person is at each moment of the trip
VISIT_OUTSIDE_TRIP = Phrase("visit.outside_trip", "日期 {day} 不在行程 {start}..{end} 之内", "its date {day} is outside the trip {start}..{end}")
STAY_OUTSIDE_TRIP = Phrase("stay.outside_trip", "住宿日期 {checkin}..{checkout} 超出行程 {start}..{end}",
                           "the nights {checkin}..{checkout} fall outside the trip {start}..{end}")
TRIP_DATES = Phrase("trip.dates", "行程 {start} 至 {end}", "trip {start} to {end}")
ELSEWHERE = Phrase("visit.elsewhere", "这时人在{city}，不在{where}", "the person is in {city} at that time, not in {where}")
AFTER_HOME = Phrase("visit.after_home", "返程 {ride} 已经出发，这之后不能再游览", "the journey home ({ride}) has already left by then")
NIGHT_ELSEWHERE = Phrase("stay.elsewhere", "{night} 晚上人在{city}，不在{where}", "on the night of {night} the person is in {city}, not in {where}")
ON_THE_WAY = Phrase("where.on_the_way", "路上", "transit")
WHEREABOUTS = Phrase("where.legs", "{leg} {depart} 出发，{arrive} 到达 {city}", "{leg} leaves {depart}, reaches {city} at {arrive}")

# currency
CURRENCY = Phrase("plan.currency", "币种写的是 {currency}，但金额是工具给出的人民币价格",
                  "the currency says {currency}, but the amounts are the tools' prices in CNY")
CURRENCY_EVIDENCE = Phrase("plan.currency.evidence", "所有出行工具的价格都以人民币计：{example}",
                           "every travel tool prices in CNY: {example}")
TEXT_CURRENCY = Phrase("text.currency", "文字里把 {amount:g} 写成了 {currency}，而行程的币种是 {plan_currency}",
                       "the text gives {amount:g} in {currency}, while the plan's currency is {plan_currency}")
TEXT_SAYS = Phrase("text.says", "回复原文：{quote}", "the reply says: {quote}")

# plans written only as text
TEXT_RIDE_MISSING = Phrase("text.ride.missing", "文字中的{kind} {number} 在本次对话的工具结果里不存在",
                           "the {kind} {number} in the text was not returned by any tool in this run")
TEXT_WRONG_TIME = Phrase("text.ride.time", "文字写 {number} {stated}，实际出发 {depart}、到达 {arrive}",
                         "the text says {number} at {stated}; it departs {depart} and arrives {arrive}")
TEXT_WRONG_PRICE = Phrase("text.price", "文字中的价格 {price:g} 元与工具结果不符", "the price {price:g} CNY in the text does not match the tools")
TEXT_HOTEL_MISSING = Phrase("text.hotel.missing", "文字中的酒店“{name}”在本次 hotel_search 结果里不存在",
                            "the hotel '{name}' in the text was not returned by hotel_search in this run")
TEXT_FARES = Phrase("text.fares", "{number} 每人票价：{offer}", "{number} fares per person: {offer}")
TEXT_RATE = Phrase("text.rate", "{name} 每晚 {price:g} 元", "{name}: {price:g} CNY/night")

# the outcome when nothing could be checked
NOTHING_CHECKED = Phrase("outcome.not_graded", "回复里没有可核对的行程（车次、航班、酒店），也没有可用的评审模型",
                         "the reply holds nothing that could be checked (no ride, flight or hotel), and no review model was available")
